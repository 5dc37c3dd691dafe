// Issue 44: one report, one number. Properties every report must have, checked over every
// Kineto fixture and validation pair (one test per property) and over every other recording
// and trace in tests/data (all at once). The first: a finding's estimate is its named
// remedy's: each finding with an estimate names the remedy it came from (`estimate_remedy`,
// one of the finding's own), that remedy's estimate is the same number, and the text,
// Markdown and HTML views print that name beside it. gemv_batch printed "-> est. 4.0x with cuda-graphs" where 4.0x was
// bigger-batch's (samples/s) and cuda-graphs' own estimate 1.00x.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"
#include "report/format_util.h"
#include "report/html_parts.h"
#include "report/reporter.h"
#include "rules/glossary.h"

namespace chokepoint {
namespace {

std::vector<std::string> fixtures() {
  namespace fs = std::filesystem;
  const std::string data = CHOKEPOINT_TEST_DATA;
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(data + "/kineto")) {
    if (e.path().string().ends_with(".json.gz")) out.push_back(fs::relative(e.path(), data).string());
  }
  for (const auto& d : fs::directory_iterator(data + "/pairs")) {
    if (fs::exists(d.path() / "trace.json.gz")) out.push_back(fs::relative(d.path() / "trace.json.gz", data).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string render(const report::Report& r, const char* format) {
  std::ostringstream out;
  report::RenderOptions wide;
  wide.width = 400;  // a line per finding's estimate, unwrapped
  EXPECT_TRUE(report::make_reporter(format)->write(r, out, wide).ok()) << format;
  return out.str();
}

void check_finding_estimates(const report::Report& rep) {
  const std::string text = render(rep, "text"), md = render(rep, "md"), html = render(rep, "html");
  for (const rules::Finding& f : rep.findings) {
    SCOPED_TRACE(f.id);
    if (!f.estimated_speedup) continue;
    ASSERT_FALSE(f.estimate_remedy.empty());
    EXPECT_NE(std::find(f.remedies.begin(), f.remedies.end(), f.estimate_remedy), f.remedies.end());
    const auto rem = std::find_if(rep.remedies.begin(), rep.remedies.end(),
                                  [&](const rules::RemedyAdvice& a) { return a.id == f.estimate_remedy; });
    ASSERT_NE(rem, rep.remedies.end()) << f.estimate_remedy;
    ASSERT_TRUE(rem->estimated_speedup.has_value());
    EXPECT_DOUBLE_EQ(*rem->estimated_speedup, *f.estimated_speedup);
    const std::string with = (rules::estimate_is_throughput(f.estimate_remedy) ? " samples/s with " : " with ");
    EXPECT_NE(text.find(with + f.estimate_remedy + " · "), std::string::npos) << text;
    EXPECT_NE(md.find(with + "`" + f.estimate_remedy + "`"), std::string::npos);
    EXPECT_NE(html.find("with <span class=\"mono\">" + f.estimate_remedy + "</span>"), std::string::npos);
  }
}

// The input-pipeline-stall fix names the worker count dataloader-workers' replay assumed (it
// said num_workers=11 where the replay sized 13).
void check_stall_workers(const report::Report& rep) {
  const auto rem = std::find_if(rep.remedies.begin(), rep.remedies.end(),
                                [](const rules::RemedyAdvice& a) { return a.id == "dataloader-workers"; });
  const auto stall = std::find_if(rep.findings.begin(), rep.findings.end(),
                                  [](const rules::Finding& f) { return f.id == "input-pipeline-stall"; });
  std::smatch m;
  if (rem == rep.remedies.end() || stall == rep.findings.end() ||
      !std::regex_search(rem->what_changes, m, std::regex(" with ([0-9]+) workers"))) {
    return;  // no stall finding with a sized replay in this fixture
  }
  EXPECT_NE(stall->recommendation.find("num_workers=" + m[1].str() + ","), std::string::npos) << stall->recommendation;
}

// The verdict's words and the headline remedy agree, or the sentence says whose remedy it
// is: healthy_bf16 read "busy computing 63%; fuse elementwise chains ... 1.18x", a memory
// finding's remedy, without naming it.
void check_headline(const report::Report& rep) {
  const std::string& s = rep.verdict.summary;
  if (rep.remedies.empty()) return;
  const std::string head = rep.remedies.front().id;
  if (s.find("(" + head + ")") == std::string::npos) return;  // no headline remedy in the sentence
  bool own = false;
  std::string named;
  for (const rules::Finding& f : rep.findings) {
    if (std::find(f.remedies.begin(), f.remedies.end(), head) == f.remedies.end()) continue;
    own = own || f.category == rep.verdict.bound;
    if (s.find("for the " + f.id + " finding") != std::string::npos) named = f.id;
  }
  EXPECT_TRUE(own || !named.empty()) << s;
}

// "What to change" is in its stated order (report/format_util.h kRemedyOrder): the first
// is the largest gain that keeps the training as it is, the rest by estimate, largest
// first; a remedy before the first with a larger estimate changes the training or is an
// upper bound. The text lists them in that order too (bert_item listed 2.5x before 3.9x
// with no rule stated).
void check_remedy_order(const report::Report& rep) {
  const auto& m = rep.remedies;
  auto gain = [](const rules::RemedyAdvice& a) { return a.estimated_speedup.value_or(0); };
  for (size_t i = 2; i < m.size(); ++i) EXPECT_GE(gain(m[i - 1]), gain(m[i])) << m[i - 1].id << " before " << m[i].id;
  for (size_t i = 1; i < m.size(); ++i) {
    if (gain(m[i]) > gain(m.front()))
      EXPECT_TRUE(m[i].changes_training || m[i].estimate_from == "upper bound") << m[i].id << " over " << m.front().id;
  }
  // Those the text lists by title ("also replayed" ones go by id on one line), in order.
  const std::string text = render(rep, "text");
  size_t at = 0;
  for (const auto& a : m) {
    if (text.find(a.title) == std::string::npos) continue;
    const size_t here = text.find(a.title, at);
    EXPECT_NE(here, std::string::npos) << a.title << " listed out of order";
    if (here != std::string::npos) at = here + a.title.size();
  }
}

// A comparator is the rule's own: evidence shown with "fires >= X" is at least X, "fires
// <= X" at most X (a copy at 7.13 GB/s printed "fires >= 42.8 GB/s": that rate picks the
// advice, the share of the step fires the rule). A ceiling triggers nothing and is only
// shown beside the value.
void check_comparators(const report::Report& rep) {
  const std::string text = render(rep, "text");
  for (const rules::Finding& f : rep.findings) {
    for (const rules::Evidence& e : f.evidence) {
      if (!e.threshold) continue;
      SCOPED_TRACE(f.id + " " + e.metric);
      if (e.side == rules::ThresholdSide::kAtLeast) EXPECT_GE(e.value, *e.threshold);
      if (e.side == rules::ThresholdSide::kAtMost) EXPECT_LE(e.value, *e.threshold);
      // The text prints the same side: "fires ≥", "fires ≤" or "ceiling".
      std::string metric = e.metric;
      std::replace(metric.begin(), metric.end(), '_', ' ');
      const size_t at = text.find(metric);
      if (at == std::string::npos) continue;  // beyond the four the text shows
      const std::string line = text.substr(at, text.find('\n', at) - at);
      EXPECT_NE(line.find(report::format_threshold(e)), std::string::npos) << line;
      EXPECT_EQ(line.find("fires ") != std::string::npos, e.side != rules::ThresholdSide::kCeiling) << line;
    }
  }
}

// Every word the report prints as an id or a key is one `chokepoint explain` knows: finding
// and remedy ids, the verdict and the findings' categories, the causes of GPU idle time,
// the evidence's metrics and the confidence (explain rejected `launch_overhead` and
// `confidence`, which the reports print).
void check_words_explained(const report::Report& rep) {
  std::vector<std::string> words = {"confidence", rules::category_name(rep.verdict.bound)};
  for (const rules::Finding& f : rep.findings) {
    words.push_back(f.id);
    words.push_back(rules::category_name(f.category));
    for (const auto& e : f.evidence) words.push_back(e.metric);
    for (const auto& id : f.remedies) words.push_back(id);
  }
  for (const auto& a : rep.remedies) words.push_back(a.id);
  const auto j = nlohmann::json::parse(render(rep, "json"));
  if (j["breakdown"]["idle_pct"].is_object()) {
    for (const auto& [cause, pct] : j["breakdown"]["idle_pct"].items()) words.push_back(cause);
  }
  for (const auto& w : words) EXPECT_NE(rules::find_glossary_entry(w), nullptr) << "explain " << w;
}

// One quantity, one value across the formats: the verdict's sentence, each finding's title
// and each remedy's estimate read the same in text, Markdown, HTML and JSON.
// The JSON's numbers carry four significant digits.
constexpr double kJsonDigits = 5e-4;

// Prose as the Markdown report escapes it (report/markdown_reporter.cc): '<' as an entity,
// '_', '*', '\\' and brackets with a backslash, except inside `code spans`.
std::string md_prose(const std::string& s) {
  std::string out;
  bool in_code = false;
  for (char c : s) {
    if (c == '`') in_code = !in_code;
    if (!in_code && c == '<') {
      out += "&lt;";
    } else {
      if (!in_code && (c == '*' || c == '_' || c == '\\' || c == '[' || c == ']')) out += '\\';
      out += c;
    }
  }
  return out;
}

void check_formats_agree(const report::Report& rep) {
  const std::string text = render(rep, "text"), md = render(rep, "md"), html = render(rep, "html");
  const auto j = nlohmann::json::parse(render(rep, "json"));
  EXPECT_EQ(j["verdict"]["summary"].get<std::string>(), rep.verdict.summary);
  auto in_all = [&](const std::string& s, const std::string& what) {
    if (s.empty()) return;
    EXPECT_NE(text.find(s), std::string::npos) << what << " not in the text: " << s;
    EXPECT_NE(md.find(md_prose(s)), std::string::npos) << what << " not in the Markdown: " << s;
    EXPECT_NE(html.find(report::html::esc(s)), std::string::npos) << what << " not in the HTML: " << s;
  };
  in_all(rep.verdict.summary, "the verdict");
  for (size_t i = 0; i < rep.findings.size(); ++i) {
    const rules::Finding& f = rep.findings[i];
    in_all(f.title, f.id + "'s title");
    EXPECT_EQ(j["findings"][i]["title"].get<std::string>(), f.title);
    if (f.estimated_speedup) {
      EXPECT_NEAR(j["findings"][i]["estimated_speedup"].get<double>(), *f.estimated_speedup,
                  kJsonDigits * *f.estimated_speedup)
          << f.id;
    }
  }
  for (size_t i = 0; i < rep.remedies.size(); ++i) {
    const auto& a = rep.remedies[i];
    EXPECT_EQ(j["remedies"][i]["id"].get<std::string>(), a.id);
    if (!a.estimated_speedup) continue;
    EXPECT_NEAR(j["remedies"][i]["estimated_speedup"].get<double>(), *a.estimated_speedup,
                kJsonDigits * *a.estimated_speedup)
        << a.id;
    in_all(report::format_speedup_range(*a.estimated_speedup, a.speedup_range_end), a.id + "'s estimate");
  }
}

void check_all(const report::Report& rep) {
  check_finding_estimates(rep);
  check_stall_workers(rep);
  check_headline(rep);
  check_remedy_order(rep);
  check_comparators(rep);
  check_words_explained(rep);
  check_formats_agree(rep);
}

// The Kineto fixtures and the validation pairs' traces: one test per property.
class Estimates : public ::testing::TestWithParam<std::string> {
 protected:
  report::Report analyzed() {
    auto r = chokepoint::golden::analyze_fixture({std::string(CHOKEPOINT_TEST_DATA) + "/" + GetParam()});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : report::Report{};
  }
};

TEST_P(Estimates, AFindingsEstimateIsItsNamedRemedys) { check_finding_estimates(analyzed()); }
TEST_P(Estimates, TheStallFixNamesTheReplaysWorkers) { check_stall_workers(analyzed()); }
TEST_P(Estimates, TheHeadlineRemedyIsTheVerdictsOrNamesItsFinding) { check_headline(analyzed()); }
TEST_P(Estimates, TheRemediesAreInTheirStatedOrder) { check_remedy_order(analyzed()); }
// One analysis for the three checks that follow (each is a sanitizer build's seconds).
TEST_P(Estimates, ComparatorsWordsAndFormatsHold) {
  const report::Report rep = analyzed();
  check_comparators(rep);
  check_words_explained(rep);
  check_formats_agree(rep);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Estimates, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(0, i.param.find('.'));
                           std::replace(n.begin(), n.end(), '/', '_');
                           return n;
                         });

// Every other recording and trace in tests/data (live samples of `run`/`watch`, the public
// programs' recordings, CUPTI traces, ranks of distributed jobs): every property at once.
std::vector<std::string> recordings() {
  namespace fs = std::filesystem;
  const std::string data = CHOKEPOINT_TEST_DATA;
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(data + "/live")) {
    if (e.is_directory()) out.push_back(fs::relative(e.path(), data).string());
  }
  for (const auto& e : fs::directory_iterator(data + "/programs/recorded")) {
    out.push_back(fs::relative(e.path() / "rec", data).string());
  }
  for (const auto& e : fs::directory_iterator(data + "/tracer/steps")) {
    out.push_back(fs::relative(e.path(), data).string());
  }
  for (const char* d : {"tracer/ddp", "distributed/straggler8", "distributed/balanced4"}) out.push_back(d);
  std::sort(out.begin(), out.end());
  return out;
}

class Recordings : public ::testing::TestWithParam<std::string> {};

TEST_P(Recordings, EveryPropertyHolds) {
  auto r = chokepoint::golden::analyze_fixture({std::string(CHOKEPOINT_TEST_DATA) + "/" + GetParam()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  check_all(r.value());
}

INSTANTIATE_TEST_SUITE_P(All, Recordings, ::testing::ValuesIn(recordings()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

}  // namespace
}  // namespace chokepoint
