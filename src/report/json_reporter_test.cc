#include "report/json_reporter.h"

#include <cmath>
#include <limits>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "report/testing_report.h"

namespace chokepoint::report {
namespace {

using Json = nlohmann::ordered_json;

// With --timings (analysis_seconds); the default leaves it out (see DeterministicWithoutTimings).
std::string render(const Report& r, bool timings = true) {
  std::ostringstream out;
  RenderOptions o;
  o.timings = timings;
  EXPECT_TRUE(JsonReporter().write(r, out, o).ok());
  return out.str();
}

TEST(JsonReporter, DeterministicWithoutTimings) {
  const Json j = Json::parse(render(testing::input_bound_report(), false));
  EXPECT_FALSE(j.contains("analysis_seconds"));
  Report later = testing::input_bound_report();
  later.analysis_seconds *= 3;  // another run of the same input
  EXPECT_EQ(render(testing::input_bound_report(), false), render(later, false));
}

TEST(JsonReporter, GpuFiguresNullWithoutAGpu) {
  Report r;  // no device, no GPU work: a CPU-only trace
  r.breakdown.gpu_idle_pct = 100;
  const Json j = Json::parse(render(r, false));
  EXPECT_TRUE(j["breakdown"]["gpu_busy_pct"].is_null());
  EXPECT_TRUE(j["breakdown"]["gpu_idle_pct"].is_null());
  EXPECT_TRUE(j["breakdown"]["idle_pct"].empty());
  EXPECT_TRUE(j["device"]["name"].is_null());
  EXPECT_TRUE(j["device"]["ceilings"]["hbm_gbps"].is_null());
}

TEST(JsonReporter, ParsesBackWithTheContractKeysInOrder) {
  const Json j = Json::parse(render(testing::input_bound_report()));
  EXPECT_EQ(j["schema"], "chokepoint.report/1");
  EXPECT_EQ(j["tool"]["name"], "chokepoint");
  EXPECT_EQ(j["tool"]["version"], "0.1.0");
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  // docs/ARCHITECTURE.md's contract keys first, in its order; keys added since come after them
  // (remedies, what is already on and what-ifs after findings, the roofline after the kernels).
  const std::vector<std::string> expected = {
      "schema",   "tool",     "inputs",        "device",       "window",          "breakdown",
      "verdict",  "findings", "remedies",      "already_on",   "what_ifs",        "top_kernels",
      "roofline", "mfu_pct",  "mfu_precision", "import_stats", "analysis_seconds"};
  EXPECT_EQ(keys, expected);
}

TEST(JsonReporter, MapsEverySection) {
  const Json j = Json::parse(render(testing::input_bound_report()));
  EXPECT_EQ(j["inputs"][0]["format"], "kineto");
  EXPECT_EQ(j["inputs"][0]["events"], 184220);
  EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(j["device"]["sms"], 132);
  EXPECT_EQ(j["device"]["ceilings"]["hbm_gbps"], 4800.0);
  EXPECT_FALSE(j.contains("devices"));  // only with more than one device
  EXPECT_EQ(j["window"]["steps"], 8);
  EXPECT_EQ(j["window"]["step_numbers"].size(), 8u);
  EXPECT_EQ(j["breakdown"]["idle_ms_per_step"]["launch_overhead"], 32.6);
  EXPECT_EQ(j["breakdown"]["busy_pct"]["gemm"], 14.2);
  EXPECT_EQ(j["breakdown"]["category_cost_pct"]["input"], 63.0);
  EXPECT_EQ(j["verdict"]["bound"], "input");
  EXPECT_EQ(j["verdict"]["confidence"], 0.93);
  EXPECT_EQ(j["findings"][0]["id"], "input-pipeline-stall");
  EXPECT_EQ(j["findings"][0]["category"], "input");
  EXPECT_EQ(j["findings"][0]["severity"], "critical");
  EXPECT_EQ(j["findings"][1]["severity"], "warning");
  EXPECT_EQ(j["findings"][0]["evidence"][0]["threshold"], 10.0);
  EXPECT_EQ(j["findings"][0]["evidence"][0]["threshold_side"], "at_least");
  EXPECT_EQ(j["findings"][0]["evidence"][0]["unit"], "%");
  EXPECT_EQ(j["top_kernels"][1]["class"], "elementwise");
  EXPECT_EQ(j["import_stats"][0]["name"], "kineto_truncated");
  EXPECT_EQ(j["import_stats"][0]["severity"], "warning");
  EXPECT_EQ(j["import_stats"][1]["count"], 37);
}

TEST(JsonReporter, RoundsFloatsToFourSignificantDigits) {
  const Json j = Json::parse(render(testing::input_bound_report()));
  EXPECT_EQ(j["window"]["step_time_ms"]["mean"], 412.3);
  EXPECT_EQ(j["window"]["analyzed_ms"], 3299.0);
  EXPECT_EQ(j["findings"][0]["estimated_speedup"], 2.715);
  EXPECT_EQ(j["findings"][0]["time_share_pct"], 63.05);
  EXPECT_EQ(j["analysis_seconds"], 1.423);
  // Printed as the short decimal, not as the nearest double's long expansion.
  EXPECT_NE(render(testing::input_bound_report()).find("\"mean\": 412.3,"), std::string::npos);
}

TEST(JsonReporter, UnknownValuesAreNullNeverZero) {
  const Json j = Json::parse(render(testing::input_bound_report()));
  EXPECT_TRUE(j["findings"][1]["estimated_speedup"].is_null());
  EXPECT_TRUE(j["findings"][1]["evidence"][2]["value"].is_null());      // was NaN
  EXPECT_TRUE(j["findings"][1]["evidence"][2]["threshold"].is_null());  // context only
  EXPECT_TRUE(j["findings"][1]["evidence"][2]["threshold_side"].is_null());
  EXPECT_TRUE(j["top_kernels"][1]["tensor_cores"].is_null());
  EXPECT_TRUE(j["top_kernels"][2]["precision"].is_null());
  Report several = testing::input_bound_report();
  several.inputs[0].events = -1;  // not known per file when several traces are merged
  EXPECT_TRUE(Json::parse(render(several))["inputs"][0]["events"].is_null());
}

TEST(JsonReporter, NeverEmitsNanOrInfinity) {
  Report r = testing::input_bound_report();
  r.analysis_seconds = std::numeric_limits<double>::infinity();
  r.breakdown.gpu_busy_pct = std::numeric_limits<double>::quiet_NaN();
  r.devices[0].ceilings.fp8_tflops = -std::numeric_limits<double>::infinity();
  const std::string text = render(r);
  const std::regex bare_number(R"([:,\[]\s*-?(nan|inf))", std::regex::icase);
  EXPECT_FALSE(std::regex_search(text, bare_number)) << text;
  const Json j = Json::parse(text);
  EXPECT_TRUE(j["analysis_seconds"].is_null());
  EXPECT_TRUE(j["breakdown"]["gpu_busy_pct"].is_null());
  EXPECT_TRUE(j["device"]["ceilings"]["fp8_tflops"].is_null());
}

TEST(JsonReporter, EmptyReportHasTheSameShapeWithNulls) {
  const Json j = Json::parse(render(Report{}));
  EXPECT_EQ(j["schema"], "chokepoint.report/1");
  EXPECT_TRUE(j["device"]["name"].is_null());
  EXPECT_TRUE(j["device"]["sms"].is_null());
  EXPECT_TRUE(j["device"]["memory_bytes"].is_null());
  EXPECT_TRUE(j["device"]["ceilings"]["hbm_gbps"].is_null());
  EXPECT_EQ(j["window"]["steps"], 0);
  EXPECT_TRUE(j["window"]["step_time_ms"]["mean"].is_null());  // no step, no step time
  EXPECT_TRUE(j["breakdown"]["idle_pct"].is_object());
  EXPECT_TRUE(j["findings"].is_array());
  EXPECT_EQ(j["verdict"]["bound"], "unknown");
}

TEST(JsonReporter, ListsAllDevicesWhenThereAreSeveral) {
  Report r = testing::input_bound_report();
  r.devices.push_back(r.devices[0]);
  r.devices[1].name = "NVIDIA H100";
  const Json j = Json::parse(render(r));
  EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][1]["name"], "NVIDIA H100");
}

TEST(JsonReporter, ReplacesInvalidUtf8InsteadOfFailing) {
  Report r = testing::input_bound_report();
  r.top_kernels[0].name = "bad\xff name";
  const Json j = Json::parse(render(r));
  EXPECT_EQ(j["top_kernels"][0]["name"], "bad\xEF\xBF\xBD name");
}

}  // namespace
}  // namespace chokepoint::report
