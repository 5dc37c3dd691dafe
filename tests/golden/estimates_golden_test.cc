// Issue 44, first of its checks: a finding's estimate is its named remedy's. Over every
// Kineto fixture (tests/data/kineto and the validation pairs' traces), each finding with an
// estimate names the remedy it came from (`estimate_remedy`, one of the finding's own),
// that remedy's estimate is the same number, and the text, Markdown and HTML views print
// that name beside it. gemv_batch printed "-> est. 4.0x with cuda-graphs" where 4.0x was
// bigger-batch's (samples/s) and cuda-graphs' own estimate 1.00x.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/analyze_pipeline.h"
#include "report/reporter.h"

namespace chokepoint {
namespace {

const bool kNoSavedProfile = setenv("CHOKEPOINT_PROFILE", "none", 1) == 0;

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

class Estimates : public ::testing::TestWithParam<std::string> {};

TEST_P(Estimates, AFindingsEstimateIsItsNamedRemedys) {
  ASSERT_TRUE(kNoSavedProfile);
  auto r = pipeline::analyze_paths({std::string(CHOKEPOINT_TEST_DATA) + "/" + GetParam()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const report::Report& rep = r.value();
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
TEST_P(Estimates, TheStallFixNamesTheReplaysWorkers) {
  ASSERT_TRUE(kNoSavedProfile);
  auto r = pipeline::analyze_paths({std::string(CHOKEPOINT_TEST_DATA) + "/" + GetParam()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const report::Report& rep = r.value();
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
TEST_P(Estimates, TheHeadlineRemedyIsTheVerdictsOrNamesItsFinding) {
  ASSERT_TRUE(kNoSavedProfile);
  auto r = pipeline::analyze_paths({std::string(CHOKEPOINT_TEST_DATA) + "/" + GetParam()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const report::Report& rep = r.value();
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
TEST_P(Estimates, TheRemediesAreInTheirStatedOrder) {
  ASSERT_TRUE(kNoSavedProfile);
  auto r = pipeline::analyze_paths({std::string(CHOKEPOINT_TEST_DATA) + "/" + GetParam()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const report::Report& rep = r.value();
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

INSTANTIATE_TEST_SUITE_P(Fixtures, Estimates, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(0, i.param.find('.'));
                           std::replace(n.begin(), n.end(), '/', '_');
                           return n;
                         });

}  // namespace
}  // namespace chokepoint
