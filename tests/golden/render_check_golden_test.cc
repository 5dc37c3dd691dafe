// The rendering check: the text, Markdown and JSON reports of every fixture the golden
// tests analyze (tests/data/kineto, and edited copies for other GPUs: an unknown one, a
// MIG slice, an L40S) must hold their columns, agree counts with their nouns, label every
// row once, and give byte-identical JSON for the same input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edited_trace.h"
#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"
#include "report/reporter.h"
#include "report/text_layout.h"

namespace chokepoint {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";
constexpr int64_t kGiB = 1024LL * 1024 * 1024;

struct Input {
  std::string name;  // test name
  std::string path;  // a fixture as it is, or "" for one made by `make`
  // Makes the edited fixture in the test that uses it: gtest builds every suite's
  // parameters in every test process, and parsing the fixtures there cost each of the
  // binary's tests seconds under the sanitizers.
  std::function<std::string()> make;
  std::string resolve() const { return make ? make() : path; }
};

std::vector<Input> inputs() {
  std::vector<Input> v;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string f = e.path().filename().string();
    if (f.size() > 8 && f.substr(f.size() - 8) == ".json.gz")
      v.push_back({f.substr(0, f.size() - 8), e.path().string(), {}});
  }
  std::sort(v.begin(), v.end(), [](const Input& a, const Input& b) { return a.name < b.name; });
  const testing::DeviceProps edited[] = {{"NVIDIA Future GPU", 200, 300 * kGiB, 12, 0},
                                         {"NVIDIA H100 80GB HBM3 MIG 3g.40gb", 60, 40 * kGiB, 9, 0},
                                         {"NVIDIA L40S", 142, 48 * kGiB, 8, 9}};
  const char* names[] = {"unknown_gpu", "mig_slice", "l40s"};
  for (size_t i = 0; i < std::size(edited); ++i) {
    const testing::DeviceProps d = edited[i];
    v.push_back({names[i], "", [d] { return testing::edited_copy(kDir, "healthy_bf16.json.gz", d); }});
    v.push_back(
        {std::string(names[i]) + "_fp32", "", [d] { return testing::edited_copy(kDir, "fp32_gemm.json.gz", d); }});
  }
  v.push_back({"cpu_only", "", [] { return testing::cpu_only_copy(kDir, "input_bound.json.gz"); }});
  return v;
}

const std::vector<Input>& all_inputs() {
  static const std::vector<Input> v = inputs();
  return v;
}

std::string render(const report::Report& r, const char* format, int width = 100) {
  std::ostringstream out;
  report::RenderOptions o;
  o.width = width;
  EXPECT_TRUE(report::make_reporter(format)->write(r, out, o).ok());
  return out.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// "1 chains", "1 copies per step": a count of one with a plural noun.
void expect_no_one_plural(const std::string& text, const std::string& what) {
  static const std::regex one_plural(
      R"((^|[^0-9.,])1 (chains|copies|launches|kernels|workers|steps|calls|ticks|GPUs|findings|events|threads|syncs|casts|allocations|graphs)\b)");
  std::smatch m;
  EXPECT_FALSE(std::regex_search(text, m, one_plural)) << what << ": \"" << m.str(0) << "\"";
}

// The rows of a table of the text report (from its header line to the first blank one)
// are as wide as the header: a cell wider than its column pushes the rest of the row.
void expect_table_columns_hold(const std::vector<std::string>& lines, const std::string& header_prefix,
                               const std::string& what) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(header_prefix, 0) != 0) continue;
    const size_t w = report::display_width(lines[i]);
    for (size_t k = i + 1; k < lines.size() && !lines[k].empty(); ++k) {
      if (lines[k].find("MFU") != std::string::npos) break;  // the line under the roofline
      EXPECT_EQ(report::display_width(lines[k]), w) << what << ": a column overflows in\n"
                                                    << lines[i] << "\n"
                                                    << lines[k];
    }
  }
}

// The breakdown's rows: each labelled, no label twice within a group.
void expect_breakdown_rows_labelled(const std::vector<std::string>& lines, const std::string& what) {
  size_t i = 0;
  while (i < lines.size() && lines[i].rfind("Where the step time goes", 0) != 0) ++i;
  std::set<std::string> seen;
  for (++i; i < lines.size() && !lines[i].empty(); ++i) {
    const std::string& l = lines[i];
    const size_t bar = l.find("\xe2\x96");  // the bar's first block character
    if (bar == std::string::npos) {         // a group heading: labels start over
      seen.clear();
      continue;
    }
    std::string label = l.substr(0, bar);
    label.erase(0, label.find_first_not_of(' '));
    label.erase(label.find_last_not_of(' ') + 1);
    EXPECT_FALSE(label.empty()) << what << ": unlabelled row\n" << l;
    EXPECT_TRUE(seen.insert(label).second) << what << ": two rows labelled \"" << label << "\"";
  }
}

// Markdown tables: every row as many cells as the header, each row's first cell named
// and named once.
void expect_markdown_tables_hold(const std::vector<std::string>& lines, const std::string& what) {
  auto cells = [](const std::string& l) {
    std::vector<std::string> v;
    std::string cur;
    for (size_t i = 1; i < l.size(); ++i) {
      if (l[i] == '|' && l[i - 1] != '\\') {
        cur.erase(0, cur.find_first_not_of(' '));
        cur.erase(cur.find_last_not_of(' ') + 1);
        v.push_back(cur);
        cur.clear();
      } else {
        cur += l[i];
      }
    }
    return v;
  };
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("| ", 0) != 0 || lines[i + 1].rfind("|---", 0) != 0) continue;
    const size_t n = cells(lines[i]).size();
    EXPECT_FALSE(cells(lines[i]).front().empty()) << what << ": unlabelled column\n" << lines[i];
    std::set<std::string> seen;
    for (size_t k = i + 2; k < lines.size() && lines[k].rfind("|", 0) == 0; ++k) {
      const auto row = cells(lines[k]);
      EXPECT_EQ(row.size(), n) << what << ": " << lines[k];
      EXPECT_FALSE(row.front().empty()) << what << ": unlabelled row " << lines[k];
      std::string label;  // the row's text cells (a location with its category, a class)
      for (const auto& c : row) {
        if (!c.empty() && !std::isdigit(static_cast<unsigned char>(c.front()))) label += c + " | ";
      }
      EXPECT_TRUE(seen.insert(label).second) << what << ": two rows labelled " << label;
    }
  }
}

class RenderCheck : public ::testing::TestWithParam<Input> {};

TEST_P(RenderCheck, TextMarkdownAndJsonHold) {
  const Input& param = GetParam();
  const Input in{param.name, param.resolve(), {}};
  ASSERT_FALSE(in.path.empty());
  auto r = chokepoint::golden::analyze_fixture({in.path});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const report::Report& rep = r.value();

  for (int width : {60, 100, 140}) {
    const std::string text = render(rep, "text", width);
    const auto lines = lines_of(text);
    const std::string what = in.name + " text at width " + std::to_string(width);
    for (const auto& l : lines) {
      // Past the width only where one word is longer than the line (a kernel name, an
      // environment setting): the wrapper breaks lines between words, never inside one.
      if (report::display_width(l) <= static_cast<size_t>(width)) continue;
      const size_t start = l.find_first_not_of(' ');
      const std::string rest = l.substr(start);
      EXPECT_EQ(rest.find(' '), std::string::npos) << what << ": " << l;
    }
    expect_table_columns_hold(lines, "  class ", what);
    expect_table_columns_hold(lines, "Top kernels", what);
    expect_breakdown_rows_labelled(lines, what);
    expect_no_one_plural(text, what);
    EXPECT_EQ(text.find('?'), std::string::npos) << what << ": a '?' where a figure should be";
  }
  const std::string md = render(rep, "md");
  expect_markdown_tables_hold(lines_of(md), in.name + " markdown");
  expect_no_one_plural(md, in.name + " markdown");

  // The same input twice: byte-identical JSON (no timing without --timings).
  const std::string json = render(rep, "json");
  expect_no_one_plural(json, in.name + " json");
  auto again = chokepoint::golden::analyze_fixture({in.path});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(json, render(again.value(), "json")) << in.name << ": JSON differs between two runs";
}

// Without a GPU the GPU figures are unknown (null), not 0% busy and 100% idle.
TEST(RenderCheckNoGpu, GpuFiguresNull) {
  const std::string path = testing::cpu_only_copy(kDir, "input_bound.json.gz");
  auto r = chokepoint::golden::analyze_fixture({path});
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto j = nlohmann::json::parse(render(r.value(), "json"));
  EXPECT_TRUE(j["breakdown"]["gpu_busy_pct"].is_null());
  EXPECT_TRUE(j["breakdown"]["gpu_idle_pct"].is_null());
  EXPECT_TRUE(j["breakdown"]["idle_pct"].empty());
  EXPECT_TRUE(j["device"]["name"].is_null());
  EXPECT_TRUE(j["mfu_pct"].is_null());
  EXPECT_NE(render(r.value(), "text").find("Where the step time goes: no GPU in the input"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RenderCheck, ::testing::ValuesIn(all_inputs()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace chokepoint
