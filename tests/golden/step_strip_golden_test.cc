// The median step's strip of the HTML report (pipeline/step_views.h) on a real trace:
// tests/data/kineto/input_bound.json.gz, a training loop on the H200 whose DataLoader
// cannot keep up (three profiled steps).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"

namespace chokepoint {
namespace {

const std::string kTrace = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/input_bound.json.gz";

double span_ms(const report::StripLane& lane, const std::string& prefix) {
  double ms = 0;
  for (const auto& s : lane.spans) {
    if (s.kind.rfind(prefix, 0) == 0) ms += s.end_ms - s.start_ms;
  }
  return ms;
}

TEST(StepStripGolden, MedianStepOfAnInputBoundLoop) {
  pipeline::AnalyzeOptions ao = chokepoint::golden::published_ceilings();
  auto r = pipeline::analyze_paths({kTrace}, {}, ao);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->median_step.has_value());
  const report::StepStrip& strip = *r->median_step;
  const report::Window& w = r->window;
  // The median step: its length is the report's p50.
  EXPECT_DOUBLE_EQ(strip.duration_ms, w.step_time_ms.p50);
  const auto at = std::find(w.step_numbers.begin(), w.step_numbers.end(), strip.step_number);
  ASSERT_NE(at, w.step_numbers.end());
  const size_t k = static_cast<size_t>(at - w.step_numbers.begin());
  ASSERT_EQ(w.step_parts.size(), w.step_numbers.size());
  double idle_ms = 0, input_ms = 0;
  for (const auto& p : w.step_parts[k]) {
    if (p.name.rfind("idle:", 0) == 0) idle_ms += p.ms_per_step;
    if (p.name == "idle:input") input_ms = p.ms_per_step;
  }
  ASSERT_GE(strip.lanes.size(), 3u);
  // The launching thread waits in the DataLoader most of the step.
  EXPECT_EQ(strip.lanes.front().name.rfind("CPU thread ", 0), 0u);
  EXPECT_GT(span_ms(strip.lanes.front(), "dataloader"), 0.8 * input_ms);
  // The idle lane holds the step's idle time; its input gaps the input idle time (a gap is
  // named by its largest cause, and neighbours closer than half a pixel merge).
  const report::StripLane& idle = strip.lanes.back();
  EXPECT_EQ(idle.name, "GPU 0 idle");
  EXPECT_NEAR(span_ms(idle, "idle:"), idle_ms, 0.02 * strip.duration_ms);
  EXPECT_NEAR(span_ms(idle, "idle:input"), input_ms, 0.05 * strip.duration_ms);
  for (const auto& lane : strip.lanes) {
    for (const auto& s : lane.spans) {
      EXPECT_GE(s.start_ms, 0);
      EXPECT_LE(s.end_ms, strip.duration_ms + 1e-9);
      EXPECT_LE(s.start_ms, s.end_ms);
    }
  }
}

}  // namespace
}  // namespace chokepoint
