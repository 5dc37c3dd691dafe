#include "exporters/prometheus_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace chokepoint::exporters {
namespace {

// Every line of a page is a comment or `name{labels} value` with balanced quotes: the
// check promtool's parser makes first (the real promtool runs in tests/serve).
bool lines_well_formed(const std::string& page) {
  size_t start = 0;
  while (start < page.size()) {
    const size_t end = page.find('\n', start);
    if (end == std::string::npos) return false;  // the page ends with a newline
    const std::string line = page.substr(start, end - start);
    start = end + 1;
    if (line.rfind("# ", 0) == 0) continue;
    bool in_quotes = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (in_quotes && line[i] == '\\') {
        ++i;
      } else if (line[i] == '"') {
        in_quotes = !in_quotes;
      }
    }
    if (in_quotes) return false;
  }
  return true;
}

TEST(PromText, FamiliesHeadersAndSamples) {
  PromWriter w;
  w.family("chokepoint_host_cpus", PromType::kGauge, "CPUs online");
  w.family("chokepoint_serve_ticks_total", PromType::kCounter, "sampling ticks\nsince start \\ ok");
  EXPECT_TRUE(w.sample("chokepoint_serve_ticks_total", {}, 42));
  EXPECT_TRUE(w.sample("chokepoint_host_cpus", {{"Hostname", "node1"}}, 16));
  EXPECT_EQ(w.text(),
            "# HELP chokepoint_host_cpus CPUs online\n"
            "# TYPE chokepoint_host_cpus gauge\n"
            "chokepoint_host_cpus{Hostname=\"node1\"} 16\n"
            "# HELP chokepoint_serve_ticks_total sampling ticks\\nsince start \\\\ ok\n"
            "# TYPE chokepoint_serve_ticks_total counter\n"
            "chokepoint_serve_ticks_total 42\n");
}

TEST(PromText, SamplesOfAFamilyStayTogether) {
  PromWriter w;
  w.family("a", PromType::kGauge, "a");
  w.family("b", PromType::kGauge, "b");
  w.sample("a", {{"x", "1"}}, 1);
  w.sample("b", {}, 2);
  w.sample("a", {{"x", "2"}}, 3);
  EXPECT_EQ(w.text(), "# HELP a a\n# TYPE a gauge\na{x=\"1\"} 1\na{x=\"2\"} 3\n# HELP b b\n# TYPE b gauge\nb 2\n");
}

TEST(PromText, RejectsDuplicatesUndeclaredAndBadNames) {
  PromWriter w;
  w.family("m", PromType::kGauge, "m");
  EXPECT_TRUE(w.sample("m", {{"pid", "1"}}, 1));
  EXPECT_FALSE(w.sample("m", {{"pid", "1"}}, 2));       // same series twice
  EXPECT_FALSE(w.sample("undeclared", {}, 1));          // no family
  EXPECT_FALSE(w.sample("m", {{"__name__", "x"}}, 1));  // reserved label
  EXPECT_FALSE(w.sample("m", {{"bad-name", "x"}}, 1));
  EXPECT_EQ(w.rejected(), 4u);
  EXPECT_EQ(w.text(), "# HELP m m\n# TYPE m gauge\nm{pid=\"1\"} 1\n");
}

TEST(PromText, Names) {
  EXPECT_TRUE(valid_metric_name("DCGM_FI_PROF_SM_ACTIVE"));
  EXPECT_TRUE(valid_metric_name("job:cpu:sum"));
  EXPECT_FALSE(valid_metric_name("1abc"));
  EXPECT_FALSE(valid_metric_name("a-b"));
  EXPECT_FALSE(valid_metric_name(""));
  EXPECT_TRUE(valid_label_name("modelName"));
  EXPECT_FALSE(valid_label_name("a:b"));
  EXPECT_FALSE(valid_label_name("__x"));
}

TEST(PromText, Values) {
  std::string s;
  append_sample_value(s, 0.1);
  s += ' ';
  append_sample_value(s, 1e21);
  s += ' ';
  append_sample_value(s, -3);
  s += ' ';
  append_sample_value(s, std::nan(""));
  s += ' ';
  append_sample_value(s, 1.0 / 0.0);
  EXPECT_EQ(s, "0.1 1e+21 -3 NaN +Inf");
}

// Process names and command lines are chosen by whoever started the process: none of
// these may end a label early, start a new line or leave invalid UTF-8 in the page.
TEST(PromText, HostileLabelValuesStayInsideTheirQuotes) {
  const std::string hostile[] = {
      "a\"} 1\nfake_metric 666",  // closes the label set and forges a sample
      "trailing backslash\\",     // would escape the closing quote
      "\\\"",
      std::string("nul\0byte", 8),
      "\xff\xfe invalid utf8 \xc3",
      "\x1b]0;title\x07",
      "\u202eevil",
      "python train.py --name=\"x\" \r\n",
  };
  PromWriter w;
  w.family("chokepoint_process_info", PromType::kGauge, "process");
  int i = 0;
  for (const std::string& h : hostile) {
    EXPECT_TRUE(w.sample("chokepoint_process_info", {{"pid", std::to_string(i++)}, {"comm", h}}, 1)) << h;
  }
  const std::string page = w.text();
  EXPECT_TRUE(lines_well_formed(page)) << page;
  // One header pair and one line per sample: nothing forged a line.
  EXPECT_EQ(std::count(page.begin(), page.end(), '\n'), 2 + static_cast<long>(std::size(hostile)));
  EXPECT_EQ(page.find("\nfake_metric"), std::string::npos);
  EXPECT_EQ(page.find('\0'), std::string::npos);
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_NE(page.find("comm=\"trailing backslash\\\\\"}"), std::string::npos) << page;
  EXPECT_NE(page.find("comm=\"a\\\"} 1\\\\x0afake_metric 666\"}"), std::string::npos) << page;
}

TEST(PromText, LongValuesAreCutAtACharacterBoundary) {
  std::string out;
  std::string v(300, 'x');
  v.replace(254, 2, "\xc3\xa9");  // é straddling the 256-byte cut? it starts at 254: kept
  append_label_value(out, v + "\xc3\xa9");
  EXPECT_EQ(out.size(), 256u + 3u);
  EXPECT_EQ(out.substr(out.size() - 5), "\xc3\xa9...");
  out.clear();
  append_label_value(out, std::string(255, 'y') + "\xc3\xa9", 256);  // é would end at 257: dropped
  EXPECT_EQ(out, std::string(255, 'y') + "...");
}

}  // namespace
}  // namespace chokepoint::exporters
