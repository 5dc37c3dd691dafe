// The sampled metrics over time that the HTML report charts (pipeline/live_series.h), on
// a real recording of `chokepoint run` (tests/data/live/input_bound: a training job whose
// DataLoader cannot keep up, on the H200).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "pipeline/live_report.h"
#include "published_ceilings.h"

namespace chokepoint {
namespace {

const std::string kLive = std::string(CHOKEPOINT_TEST_DATA) + "/live/";

double mean_of_buckets(const report::LiveSeries& s) {
  double sum = 0, n = 0;
  for (double v : s.values) {
    if (!std::isnan(v)) sum += v, n += 1;
  }
  return n > 0 ? sum / n : NAN;
}

TEST(LiveSeriesGolden, BucketsAgreeWithTheSummary) {
  pipeline::AnalyzeOptions ao = chokepoint::golden::published_ceilings();
  auto r = pipeline::analyze_recording_dir(kLive + "input_bound", ao);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->live.has_value());
  const report::LiveSummary& l = *r->live;
  ASSERT_FALSE(l.series.empty());
  EXPECT_NEAR(l.series_bucket_s * static_cast<double>(l.series.front().values.size()), l.duration_s, 0.01);
  const report::LiveSeries* user = nullptr;
  for (const auto& s : l.series) {
    if (s.group == "Host CPU (share of all CPUs)" && s.name == "user") user = &s;
    EXPECT_LE(s.values.size(), 240u);
  }
  ASSERT_NE(user, nullptr);
  ASSERT_TRUE(l.host.user_pct.has_value());
  // Ticks fall evenly into the buckets: the mean of the bucket means is the run's mean.
  EXPECT_NEAR(mean_of_buckets(*user), l.host.user_pct->mean, 1.0);
  bool gpu_activity = false;
  for (const auto& s : l.series) gpu_activity = gpu_activity || s.group.rfind("GPU ", 0) == 0;
  EXPECT_TRUE(gpu_activity);
}

}  // namespace
}  // namespace chokepoint
