// clock-throttled and gpu-memory-near-full on synthetic recordings (60 ticks at 100 ms).
#include "rules/sampled/live_test_util.h"

namespace chokepoint::rules::testing {
namespace {

const Entity kGpu = Entity::gpu(0);
constexpr double kHwThermal = 0x40, kPowerCap = 0x4;

TEST(ClockThrottled, ThermalSlowdownWithClockWhatIf) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(95));
  b.series(MetricId::kGpuClockEventReasons, kGpu, from(40, 0, kHwThermal));
  b.series(MetricId::kGpuSmClockMhz, kGpu, from(40, 1980, 990));
  b.series(MetricId::kGpuTemperatureC, kGpu, from(40, 70, 91));
  const auto f = run_rule(clock_throttled, b.rec());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "clock-throttled");
  EXPECT_EQ(f->category, Category::kCompute);
  const double share = 20.0 / 60;  // ticks 40..59
  EXPECT_NEAR(f->time_share_pct, 100 * share, 1e-9);
  EXPECT_NEAR(ev(*f, "slowdown_ticks_pct").value, 100 * share, 1e-9);
  EXPECT_EQ(ev(*f, "slowdown_ticks_pct").threshold, 5.0);
  EXPECT_NEAR(ev(*f, "sm_clock_mean_mhz").value, (40 * 1980.0 + 20 * 990.0) / 60, 1e-9);
  EXPECT_EQ(ev(*f, "temperature_max_c").value, 91.0);
  // A third of the time at half the clock: 1 / (2/3 + 1/3 * 990/1980).
  ASSERT_TRUE(f->estimated_speedup);
  EXPECT_NEAR(*f->estimated_speedup, 1.0 / (1 - share + share * 990.0 / 1980.0), 1e-9);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_TRUE(contains(f->title, "thermal"));
}

TEST(ClockThrottled, PowerCapOnASaturatedGpuIsInfo) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(99));
  b.series(MetricId::kGpuSmActive, kGpu, even_ticks(every(88)));
  b.series(MetricId::kGpuTensorActive, kGpu, even_ticks(every(60)));
  b.series(MetricId::kGpuClockEventReasons, kGpu, every(kPowerCap));
  b.series(MetricId::kGpuPowerW, kGpu, every(698));
  b.series(MetricId::kGpuPowerLimitW, kGpu, every(700));
  const auto f = run_rule(clock_throttled, b.rec());
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_FALSE(f->estimated_speedup);
  EXPECT_EQ(ev(*f, "power_mean_w").threshold, 700.0);
  EXPECT_TRUE(contains(f->recommendation, "Nothing to fix"));
}

TEST(ClockThrottled, PowerCapOnALightlyLoadedGpuIsAWarning) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(30));
  b.series(MetricId::kGpuSmActive, kGpu, even_ticks(every(20)));
  b.series(MetricId::kGpuTensorActive, kGpu, even_ticks(every(0)));
  b.series(MetricId::kGpuClockEventReasons, kGpu, from(30, 0, kPowerCap));
  const auto f = run_rule(clock_throttled, b.rec());
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->time_share_pct, 50.0, 1e-9);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_TRUE(contains(f->recommendation, "Default Power Limit"));
}

TEST(ClockThrottled, RareOrNoReasonsDoNotFire) {
  RecordingBuilder none;
  none.gpu(0);
  none.series(MetricId::kGpuUtilization, kGpu, every(95));
  none.series(MetricId::kGpuClockEventReasons, kGpu, every(0));
  EXPECT_FALSE(run_rule(clock_throttled, none.rec()));
  RecordingBuilder rare;  // power cap in 6 of 60 ticks: below a fifth
  rare.gpu(0);
  rare.series(MetricId::kGpuUtilization, kGpu, every(95));
  rare.series(MetricId::kGpuClockEventReasons, kGpu, from(54, 0, kPowerCap));
  EXPECT_FALSE(run_rule(clock_throttled, rare.rec()));
}

TEST(GpuMemoryNearFull, AboveNinetyFivePercentIsAtMostAWarning) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(90));
  b.series(MetricId::kGpuMemoryTotalBytes, kGpu, every(140e9));
  b.series(MetricId::kGpuMemoryUsedBytes, kGpu, from(30, 100e9, 137e9));
  const auto f = run_rule(gpu_memory_near_full, b.rec());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "gpu-memory-near-full");
  EXPECT_EQ(f->category, Category::kMemory);
  EXPECT_NEAR(ev(*f, "gpu_memory_used_peak_pct").value, 100 * 137.0 / 140.0, 1e-9);
  EXPECT_EQ(ev(*f, "gpu_memory_used_peak_pct").threshold, 95.0);
  EXPECT_NEAR(f->time_share_pct, 50.0, 1e-9);
  EXPECT_EQ(f->severity, Severity::kWarning);  // 50% of the run, but a risk: capped
}

TEST(GpuMemoryNearFull, HeadroomDoesNotFire) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(90));
  b.series(MetricId::kGpuMemoryTotalBytes, kGpu, every(140e9));
  b.series(MetricId::kGpuMemoryUsedBytes, kGpu, every(120e9));
  EXPECT_FALSE(run_rule(gpu_memory_near_full, b.rec()));
}

}  // namespace
}  // namespace chokepoint::rules::testing
