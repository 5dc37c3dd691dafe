// Several profiler windows of one process (issue 44): torch.profiler with a repeating
// schedule and tensorboard_trace_handler writes one file per window into one directory,
// the same pid, the next window minutes later. Made here from real fixtures
// (tests/data/kineto, recorded on the H200): the trace as it is, and a copy whose every
// timestamp is 300 s later and whose steps are numbered from 100 on, as the next window of
// the same loop. Analyzed together they are twice the steps of one window at the same
// step time, and the what-ifs replay one window: before, the second window's first step
// kept its warm-up tail (p95 29 ms against 12.8 ms) and one replay spanned both windows
// ("50,009 ms per step recorded", estimates of 1.00x).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "edited_trace.h"
#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"
#include "report/reporter.h"

namespace chokepoint {
namespace {

constexpr double kShiftUs = 300e6;  // the next window, 300 s on
constexpr int kRenumber = 100;

// `dir`/w1.pt.trace.json (the fixture) and w2.pt.trace.json (its next window).
bool write_windows(const std::string& fixture, const std::string& dir) {
  nlohmann::json j;
  if (!testing::load_fixture(std::string(CHOKEPOINT_TEST_DATA) + "/kineto/" + fixture, dir + "/src", &j)) return false;
  std::ofstream(dir + "/w1.pt.trace.json") << j.dump();
  const std::regex step("ProfilerStep#([0-9]+)");
  for (auto& e : j.at("traceEvents")) {
    if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + kShiftUs;
    std::smatch m;
    const std::string name = e.value("name", "");
    if (std::regex_match(name, m, step)) e["name"] = "ProfilerStep#" + std::to_string(std::stoi(m[1]) + kRenumber);
  }
  std::ofstream(dir + "/w2.pt.trace.json") << j.dump();
  return true;
}

report::Report analyze(const std::string& path) {
  pipeline::AnalyzeOptions ao = chokepoint::golden::published_ceilings();
  auto r = pipeline::analyze_paths({path}, {}, ao);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : report::Report{};
}

const rules::RemedyAdvice* remedy(const report::Report& r, const std::string& id) {
  for (const auto& a : r.remedies) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

class Windows : public ::testing::TestWithParam<const char*> {};

TEST_P(Windows, TwoWindowsOfOneProcessAreOneWindowsStepsTwice) {
  const std::string dir = ::testing::TempDir() + "/windows_" + std::to_string(getpid()) + "_" +
                          std::filesystem::path(GetParam()).stem().stem().string();
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_windows(GetParam(), dir));
  const report::Report one = analyze(dir + "/w1.pt.trace.json");
  const report::Report two = analyze(dir);
  std::filesystem::remove_all(dir);
  ASSERT_GT(one.window.steps, 0);
  EXPECT_EQ(two.window.steps, 2 * one.window.steps);
  EXPECT_NEAR(two.window.step_time_ms.mean, one.window.step_time_ms.mean, 0.02 * one.window.step_time_ms.mean);
  EXPECT_NEAR(two.window.step_time_ms.p95, one.window.step_time_ms.p95, 0.02 * one.window.step_time_ms.p95);
  // The what-ifs replay one window: the same estimates as the window alone.
  ASSERT_FALSE(one.remedies.empty());
  for (const auto& a : one.remedies) {
    SCOPED_TRACE(a.id);
    const rules::RemedyAdvice* b = remedy(two, a.id);
    ASSERT_NE(b, nullptr);
    EXPECT_DOUBLE_EQ(b->step_ms_before, a.step_ms_before);
    ASSERT_EQ(b->estimated_speedup.has_value(), a.estimated_speedup.has_value());
    if (a.estimated_speedup) EXPECT_DOUBLE_EQ(*b->estimated_speedup, *a.estimated_speedup);
  }
  EXPECT_EQ(two.verdict.bound, one.verdict.bound);
  // Each window apart (issue 44: "analyzed per window and together"): the same steps as the
  // window alone, numbered as that file numbers them; one window alone lists none.
  EXPECT_TRUE(one.window.profiler_windows.empty());
  ASSERT_EQ(two.window.profiler_windows.size(), 2u);
  const auto& w1 = two.window.profiler_windows[0];
  const auto& w2 = two.window.profiler_windows[1];
  EXPECT_EQ(std::filesystem::path(w1.path).filename(), "w1.pt.trace.json");
  EXPECT_EQ(std::filesystem::path(w2.path).filename(), "w2.pt.trace.json");
  EXPECT_EQ(w1.steps, one.window.steps);
  EXPECT_EQ(w2.steps, one.window.steps);
  EXPECT_EQ(w1.first_step, one.window.step_numbers.front());
  EXPECT_EQ(w2.first_step, one.window.step_numbers.front() + kRenumber);
  EXPECT_EQ(w2.last_step, one.window.step_numbers.back() + kRenumber);
  EXPECT_NEAR(w1.step_time_ms.p50, one.window.step_time_ms.p50, 1e-9);
  EXPECT_NEAR(w2.step_time_ms.p50, one.window.step_time_ms.p50, 0.02 * one.window.step_time_ms.p50);
  EXPECT_NEAR(w1.gpu_busy_pct, one.breakdown.gpu_busy_pct, 1.0);
  // The text lists both windows and the one GPU once.
  std::ostringstream text;
  ASSERT_TRUE(report::make_reporter("text")->write(two, text, {}).ok());
  EXPECT_NE(text.str().find("window    w2.pt.trace.json: steps " + std::to_string(w2.first_step)), std::string::npos)
      << text.str();
  const std::string t = text.str();
  EXPECT_EQ(t.find("device  "), t.rfind("device  ")) << t;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Windows,
                         ::testing::Values("healthy_bf16.json.gz", "sync_bound.json.gz", "input_bound.json.gz"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = i.param;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace chokepoint
