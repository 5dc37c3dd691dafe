#include "report/json_report_reader.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/json_reporter.h"
#include "report/testing_report.h"

namespace chokepoint::report {
namespace {

std::string render(const Report& r) {
  std::ostringstream out;
  EXPECT_TRUE(JsonReporter().write(r, out, RenderOptions{}).ok());
  return out.str();
}

// What `diff` compares comes back as the JSON reporter wrote it.
TEST(JsonReportReader, ReadsBackWhatDiffCompares) {
  Report in = testing::input_bound_report();
  in.window.step_ms = {405.1, 398.7, 481.9, 410.0, 404.2, 412.3, 470.2, 416.4};
  const std::string text = render(in);
  EXPECT_TRUE(looks_like_json_report(text));
  auto got = report_from_json(text);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const Report& r = got.value();
  EXPECT_EQ(r.window.steps, 8);
  EXPECT_EQ(r.window.step_ms, in.window.step_ms);
  EXPECT_DOUBLE_EQ(r.window.step_time_ms.p50, 405.1);
  EXPECT_DOUBLE_EQ(r.window.step_time_ms.p95, 470.2);
  EXPECT_EQ(r.verdict.bound, rules::Category::kInput);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].id, "input-pipeline-stall");
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);
  EXPECT_EQ(r.findings[1].severity, Severity::kWarning);
  ASSERT_EQ(r.remedies.size(), 1u);
  EXPECT_EQ(r.remedies[0].id, "dataloader-workers");
  EXPECT_NEAR(*r.remedies[0].estimated_speedup, 2.7149, 1e-3);
  EXPECT_EQ(r.remedies[0].findings, std::vector<std::string>{"input-pipeline-stall"});
  EXPECT_FALSE(r.remedies[0].speedup_range_end.has_value());
  ASSERT_EQ(r.breakdown.idle_by_cause.size(), 4u);
  EXPECT_EQ(r.breakdown.idle_by_cause[0].name, "input");
  EXPECT_NEAR(r.breakdown.idle_by_cause[0].ms_per_step, 259.7, 1e-9);
  // Category costs carry no ms in the contract: pct of the mean analyzed step, from
  // analyzed_ms as the JSON rounds it (3298.76 -> 3299, four significant digits).
  ASSERT_EQ(r.breakdown.category_costs.size(), 6u);
  EXPECT_EQ(r.breakdown.category_costs[0].name, "input");
  EXPECT_NEAR(r.breakdown.category_costs[0].ms_per_step, 0.63 * 3299 / 8, 1e-9);
  ASSERT_EQ(r.top_kernels.size(), 4u);
  EXPECT_EQ(r.top_kernels[2].name, "Memcpy HtoD (Pageable -> Device)");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "NVIDIA H200");
}

// An estimate that is a range (a whole-job CUPTI trace's tracer cost) is written as
// "estimated_speedup_range" [low, high] and comes back with the same two ends.
TEST(JsonReportReader, ARangeComesBackWithBothEnds) {
  Report in = testing::input_bound_report();
  in.remedies[0].speedup_range_end = 2.1;
  in.findings[0].speedup_range_end = 2.1;
  const std::string text = render(in);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["remedies"][0]["estimated_speedup_range"], nlohmann::json::array({2.1, 2.715}));
  EXPECT_EQ(j["findings"][0]["estimated_speedup_range"], nlohmann::json::array({2.1, 2.715}));
  EXPECT_TRUE(j["findings"][1]["estimated_speedup_range"].is_null());
  auto got = report_from_json(text);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_NEAR(*got.value().remedies[0].estimated_speedup, 2.715, 1e-3);
  ASSERT_TRUE(got.value().remedies[0].speedup_range_end.has_value());
  EXPECT_NEAR(*got.value().remedies[0].speedup_range_end, 2.1, 1e-9);
  EXPECT_NEAR(*got.value().findings[0].speedup_range_end, 2.1, 1e-9);
}

TEST(JsonReportReader, RefusesOtherJson) {
  EXPECT_FALSE(looks_like_json_report("{\"traceEvents\": []}"));
  EXPECT_FALSE(looks_like_json_report("[{\"schema\": \"chokepoint.report/1\"}]"));
  EXPECT_EQ(report_from_json("{\"schema\": \"chokepoint.report/9\"}").status().code(), ErrorCode::kInput);
  EXPECT_EQ(report_from_json("{\"schema\": ").status().code(), ErrorCode::kInput);
  EXPECT_EQ(report_from_json("{}").status().code(), ErrorCode::kInput);
}

}  // namespace
}  // namespace chokepoint::report
