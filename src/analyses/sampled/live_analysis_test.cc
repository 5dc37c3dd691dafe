// The helpers the sample rules lean on: the activity series, the active window and its
// ticks, the busy share, held().
#include "analyses/sampled/live_analysis.h"

#include <gtest/gtest.h>

#include "analyses/testing/recording_builder.h"

namespace chokepoint::analyses::sampled {
namespace {

using samples::Entity;
using samples::MetricId;
using testing::RecordingBuilder;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(LiveAnalysis, ActiveWindowFromUtilization) {
  RecordingBuilder b(20);
  b.gpu(0);
  // Idle for 5 ticks (imports, CUDA init), busy 10, idle 5 (saving).
  b.series(MetricId::kGpuUtilization, Entity::gpu(0),
           [](int i) { return std::optional<double>(i >= 5 && i < 15 ? 80.0 : 0.0); });
  b.series(MetricId::kGpuSmActive, Entity::gpu(0),
           [](int i) { return i % 2 == 0 ? std::optional<double>(i >= 5 && i < 15 ? 40.0 : 0.0) : std::nullopt; });
  const LiveAnalysis la = analyze_recording(b.rec());
  ASSERT_EQ(la.gpus.size(), 1u);
  const GpuLive& g = la.gpus[0];
  EXPECT_EQ(activity_series(b.rec().samples, 0)->metric, MetricId::kGpuUtilization);
  EXPECT_EQ(g.active_start_ns, b.t(5));
  EXPECT_EQ(g.active_end_ns, b.t(14));
  EXPECT_EQ(g.active_ticks, 10);
  const auto ticks = active_ticks(la, g);
  ASSERT_EQ(ticks.size(), 10u);
  EXPECT_EQ(ticks.front(), b.t(5));
  EXPECT_EQ(ticks.back(), b.t(14));
  EXPECT_DOUBLE_EQ(*busy_pct(g), 80.0);  // utilization wins over SM activity
  EXPECT_DOUBLE_EQ(g.sm_active->mean, 40.0);
}

TEST(LiveAnalysis, WarmUpBelowHalfTheUsualLevelIsLeftOut) {
  RecordingBuilder b(40);
  b.gpu(0);
  // A few kernels while the model is built (5%), then training at 100%, then a save (3%).
  b.series(MetricId::kGpuUtilization, Entity::gpu(0), [](int i) {
    return std::optional<double>(i < 10 ? 5.0 : i < 35 ? 100.0 : 3.0);
  });
  const LiveAnalysis la = analyze_recording(b.rec());
  const GpuLive& g = la.gpus[0];
  EXPECT_EQ(g.active_start_ns, b.t(10));
  EXPECT_EQ(g.active_end_ns, b.t(34));
  EXPECT_DOUBLE_EQ(g.util->mean, 100.0);
}

TEST(LiveAnalysis, ActivityFallsBackToSmActiveWhenUtilizationIsInvalid) {
  RecordingBuilder b(10);
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, Entity::gpu(0), [](int) { return std::optional<double>(kNaN); });
  b.series(MetricId::kGpuSmActive, Entity::gpu(0), [](int i) { return std::optional<double>(i < 2 ? 0.0 : 30.0); });
  const LiveAnalysis la = analyze_recording(b.rec());
  const GpuLive& g = la.gpus[0];
  EXPECT_EQ(activity_series(b.rec().samples, 0)->metric, MetricId::kGpuSmActive);
  EXPECT_FALSE(g.util.has_value());
  EXPECT_EQ(g.active_start_ns, b.t(2));
  EXPECT_DOUBLE_EQ(*busy_pct(g), 30.0);
  EXPECT_EQ(active_ticks(la, g).size(), 8u);
}

TEST(LiveAnalysis, NeverActiveGpuHasNoActiveTicks) {
  RecordingBuilder b(10);
  b.gpu(0);
  b.constant(MetricId::kGpuUtilization, Entity::gpu(0), 0.0);
  const LiveAnalysis la = analyze_recording(b.rec());
  EXPECT_TRUE(active_ticks(la, la.gpus[0]).empty());
  EXPECT_DOUBLE_EQ(*busy_pct(la.gpus[0]), 0.0);
  EXPECT_EQ(activity_series(samples::SampleStore{}, 0), nullptr);
}

TEST(LiveAnalysis, HeldKeepsTheLastValidValueWithinItsAge) {
  RecordingBuilder b(10);
  b.series(MetricId::kHostCpuStealPct, Entity::host(), [](int i) {
    if (i == 3) return std::optional<double>(kNaN);
    return i % 3 == 0 ? std::optional<double>(i) : std::nullopt;
  });
  const samples::Series* s = b.rec().samples.find(MetricId::kHostCpuStealPct, Entity::host());
  const int64_t age = 2 * b.interval_ns();
  EXPECT_EQ(held(s, b.t(1), age), 0.0);
  EXPECT_EQ(held(s, b.t(2), age), 0.0);
  EXPECT_FALSE(held(s, b.t(4), age).has_value());  // tick 3 invalid, tick 0 too old
  EXPECT_EQ(held(s, b.t(7), age), 6.0);
}

}  // namespace
}  // namespace chokepoint::analyses::sampled
