// The verdict of a live recording: starved GPU -> the host-side finding that explains it;
// busy GPU -> compute / memory / transfer from GPM and PCIe; no GPU metrics -> the host.
#include "rules/sampled/live_test_util.h"

namespace chokepoint::rules::testing {
namespace {

const Entity kGpu = Entity::gpu(0);
constexpr int64_t kPid = RecordingBuilder::kLaunchedPid;

const CategoryCost* cost(const Diagnosis& d, Category c) {
  for (const auto& x : d.costs) {
    if (x.category == c) return &x;
  }
  return nullptr;
}

TEST(DiagnoseSamples, StarvedByTheLoaderIsInput) {
  // Every 5th tick from 5 at 90%, the others at 20% while the worker is saturated.
  RecordingBuilder b = gpu_fed_every_fifth_tick();
  b.process(kPid + 1, ProcessRole::kDataLoaderWorker);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(50));
  b.series(MetricId::kProcCpuPct, Entity::process(kPid + 1), every(99));
  const Diagnosis d = run_diagnosis(b.rec());
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "input-pipeline-stall");
  EXPECT_EQ(d.bound, Category::kInput);
  // The active window: ticks 5..55, from the first to the last at least half the usual 90%.
  const double busy = (11 * 90.0 + 40 * 20.0) / 51;  // 35%
  const double stalled = 100.0 * 40 / 51;            // 78% of the ticks: explains all idle time
  ASSERT_EQ(d.costs.front().category, Category::kInput);
  EXPECT_NEAR(d.costs.front().pct, std::min(100 - busy, stalled), 1e-9);
  EXPECT_NEAR(cost(d, Category::kCompute)->pct, busy, 1e-9);
  EXPECT_EQ(cost(d, Category::kIdle), nullptr);
  EXPECT_NEAR(static_cast<double>(d.costs.front().ns), (100 - busy) / 100 * 5.0e9, 1.0);  // 5.0 s window
  // Share-based confidence, scaled for samples (the idle side needs no GPM).
  EXPECT_NEAR(d.confidence, 0.7 * (100 - busy) / 100, 1e-9);
  EXPECT_TRUE(contains(d.summary, "busy 35%"));
  EXPECT_TRUE(contains(d.summary, d.findings.front().title));
}

TEST(DiagnoseSamples, BusyTensorHeavyGpuIsCompute) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(98));
  b.series(MetricId::kGpuSmActive, kGpu, even_ticks(every(90)));
  b.series(MetricId::kGpuTensorActive, kGpu, even_ticks(every(70)));
  b.series(MetricId::kGpuDramActive, kGpu, even_ticks(every(30)));
  b.series(MetricId::kGpuMemoryTotalBytes, kGpu, every(140e9));
  b.series(MetricId::kGpuMemoryUsedBytes, kGpu, every(80e9));
  const Diagnosis d = run_diagnosis(b.rec());
  EXPECT_TRUE(d.findings.empty());  // a healthy run: nothing to report
  EXPECT_EQ(d.bound, Category::kCompute);
  ASSERT_EQ(d.costs.size(), 2u);
  EXPECT_NEAR(d.costs[0].pct, 98.0, 1e-9);
  EXPECT_EQ(d.costs[1].category, Category::kIdle);
  EXPECT_NEAR(d.confidence, 0.7 * 0.98, 1e-9);
  EXPECT_TRUE(contains(d.summary, "bound by its own compute (SM activity 90%, tensor cores 70%)"));
}

TEST(DiagnoseSamples, BusyWithoutGpmIsComputeWithLowerConfidence) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(90));
  const Diagnosis d = run_diagnosis(b.rec());
  EXPECT_EQ(d.bound, Category::kCompute);
  EXPECT_NEAR(d.confidence, 0.7 * 0.7 * 0.9, 1e-9);
  EXPECT_TRUE(contains(d.summary, "no GPM metrics"));
}

TEST(DiagnoseSamples, HighDramActivityIsMemory) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(97));
  b.series(MetricId::kGpuSmActive, kGpu, even_ticks(every(85)));
  b.series(MetricId::kGpuTensorActive, kGpu, even_ticks(every(10)));
  b.series(MetricId::kGpuDramActive, kGpu, even_ticks(every(75)));
  const Diagnosis d = run_diagnosis(b.rec());
  EXPECT_EQ(d.bound, Category::kMemory);
  EXPECT_TRUE(contains(d.summary, "DRAM activity 75%"));
}

TEST(DiagnoseSamples, NoGpuMetricsTheHostDecides) {
  RecordingBuilder b;
  b.rec().meta.gpu_unavailable = "NVML not found: libnvidia-ml.so.1";
  b.series(MetricId::kHostCpuStealPct, Entity::host(), every(12));
  const Diagnosis d = run_diagnosis(b.rec());
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].id, "cpu-steal");
  EXPECT_EQ(d.bound, Category::kHost);
  EXPECT_NEAR(d.confidence, 0.4, 1e-9);
  EXPECT_TRUE(contains(d.summary, "GPU metrics were unavailable (NVML not found: libnvidia-ml.so.1)"));
  EXPECT_TRUE(contains(d.summary, d.findings[0].title));
}

TEST(DiagnoseSamples, IdleGpuNothingOnTheHost) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(10));
  EXPECT_EQ(run_diagnosis(b.rec()).bound, Category::kUnknown);  // no process data at all
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(20));
  const Diagnosis d = run_diagnosis(b.rec());
  // Idle time nothing explains is no verdict: unknown, with the reason (issue 10).
  EXPECT_EQ(d.bound, Category::kUnknown);
  EXPECT_EQ(d.confidence, 0.0);
  EXPECT_NEAR(d.costs.front().pct, 90.0, 1e-9);
  EXPECT_TRUE(contains(d.summary, "nothing on the host explains"));
  EXPECT_TRUE(contains(d.unknown_reason, "busy 10%"));
}

// GIL contention in a process whose GPU is busy 95% of the time does not limit the run.
TEST(DiagnoseSamples, HostFindingsAreContextWhenTheGpuIsBusy) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(95));
  b.process(kPid, ProcessRole::kLaunched, "python3");
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(100));
  for (int k = 0; k < 2; ++k) {
    const Entity t = Entity::thread(kPid, kPid + k);
    b.series(MetricId::kThreadCpuPct, t, every(50));
    b.series(MetricId::kThreadCtxVoluntaryPerS, t, every(200));
  }
  const Diagnosis d = run_diagnosis(b.rec());
  EXPECT_EQ(d.bound, Category::kCompute);
  const auto it = std::find_if(d.findings.begin(), d.findings.end(),
                               [](const Finding& f) { return f.id == "gil-contention"; });
  ASSERT_NE(it, d.findings.end());
  EXPECT_EQ(it->severity, Severity::kInfo);
  EXPECT_TRUE(contains(it->detail, "GPU was busy 95%"));
}

TEST(DiagnoseSamples, EverySampleRuleIsRegisteredOnce) {
  int n = 0;
  for (const auto& r : all_rules()) n += r.samples != nullptr;
  // The 12 of docs/ARCHITECTURE.md's live list plus launch-overhead, pageable-memcpy and host-work,
  // which samples tell from input stalls (rules/sampled/starvation.h), and no-tensor-cores
  // (GPM: busy SMs, idle tensor pipes).
  EXPECT_EQ(n, 16);
}

}  // namespace
}  // namespace chokepoint::rules::testing
