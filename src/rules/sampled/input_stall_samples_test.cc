// input-pipeline-stall from live samples: the GPU starved while a DataLoader worker or
// the main process is CPU-saturated.
#include "rules/sampled/live_test_util.h"

namespace chokepoint::rules::testing {
namespace {

const Entity kGpu = Entity::gpu(0);
constexpr int64_t kPid = RecordingBuilder::kLaunchedPid;

// The GPU fed every 5th tick while two DataLoader workers run at 98% and 97% of a core.
RecordingBuilder starved_by_workers() {
  RecordingBuilder b = gpu_fed_every_fifth_tick();
  b.process(kPid + 1, ProcessRole::kDataLoaderWorker);
  b.process(kPid + 2, ProcessRole::kDataLoaderWorker);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(60));
  b.series(MetricId::kProcCpuPct, Entity::process(kPid + 1), every(98));
  b.series(MetricId::kProcCpuPct, Entity::process(kPid + 2), every(97));
  return b;
}

TEST(InputPipelineStallSamples, WorkersSaturatedWhileTheGpuStarves) {
  RecordingBuilder b = starved_by_workers();
  const auto f = run_rule(input_pipeline_stall_samples, b.rec());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "input-pipeline-stall");
  EXPECT_EQ(f->category, Category::kInput);
  // The active window runs from the first to the last tick at least half as busy as usual
  // (90%): ticks 5..55 (51): 11 fed (5, 10 .. 55), 40 starved with the workers saturated.
  const double share = 40.0 / 51;
  EXPECT_NEAR(f->time_share_pct, 100 * share, 1e-9);
  EXPECT_EQ(ev(*f, "stalled_ticks_pct").threshold, 20.0);
  EXPECT_NEAR(ev(*f, "gpu_busy_in_stalled_ticks_pct").value, 20.0, 1e-9);
  EXPECT_NEAR(ev(*f, "gpu_busy_when_fed_pct").value, 90.0, 1e-9);
  EXPECT_EQ(ev(*f, "dataloader_worker_count").value, 2.0);
  // What-if: the 40 stalled ticks' work (20% each) runs at the fed 90%.
  ASSERT_TRUE(f->estimated_speedup);
  EXPECT_NEAR(*f->estimated_speedup, 51.0 / (11 + 40 * 20.0 / 90), 1e-9);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_TRUE(contains(f->title, "DataLoader"));
  // 2 workers feed it 1 / 2.56 of what it takes: 2 x 2.56 = 5.1, so 6 workers.
  EXPECT_TRUE(contains(f->recommendation, "raise num_workers to 6"));
}

// Workers that deliver in bursts (resnet_workers on the H200, issue 10): a fed tick is often
// fed for only part of its period, so the fed rate is the upper quartile of the fed
// readings, and the gain is by throughput over the span in which the workers load. A
// warm-up before it (the main process busy, the workers idle with their queue full) is
// not loading and is left out.
TEST(InputPipelineStallSamples, BurstyWorkersAreJudgedByThroughputWhileLoading) {
  RecordingBuilder b(80);
  b.host_fact("cpus", "16");
  b.gpu(0);
  // Ticks 0-19 warm-up: 60% busy; then a cycle of 4 ticks: 0, 0, 60, 100 (mean 40%).
  const double cycle[] = {0, 0, 60, 100};
  b.series(MetricId::kGpuUtilization, kGpu, [&](int i) { return std::optional<double>(i < 20 ? 60 : cycle[i % 4]); });
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), from(20, 100, 50));
  for (int w = 1; w <= 4; ++w) {
    b.process(kPid + w, ProcessRole::kDataLoaderWorker);
    b.series(MetricId::kProcCpuPct, Entity::process(kPid + w), from(20, 0, 97));
  }
  const auto f = run_rule(input_pipeline_stall_samples, b.rec());
  ASSERT_TRUE(f);
  // Loading span: ticks 20-79 (60), 30 fed (60 and 100): upper quartile 100; the GPU's
  // work, 40% a tick, done at 100%: 2.5x. (Counting fed ticks whole, at their mean 80%,
  // and the warm-up as fed, gave 80 / 50 = 1.6x.)
  ASSERT_TRUE(f->estimated_speedup);
  EXPECT_NEAR(*f->estimated_speedup, 2.5, 1e-9);
  EXPECT_NEAR(ev(*f, "gpu_busy_while_loading_pct").value, 40.0, 1e-9);
  EXPECT_TRUE(contains(f->recommendation, "raise num_workers to 10"));
}

// More workers need cores: 4 saturated workers on 8 CPUs can grow to 6 (the main process
// and its pin-memory thread keep theirs), 1.5x, however idle the GPU.
TEST(InputPipelineStallSamples, TheCpusCapTheWorkersGain) {
  RecordingBuilder b;
  b.host_fact("cpus", "8");
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, [](int i) { return std::optional<double>(i % 5 == 0 ? 90 : 5); });
  for (int w = 1; w <= 4; ++w) {
    b.process(kPid + w, ProcessRole::kDataLoaderWorker);
    b.series(MetricId::kProcCpuPct, Entity::process(kPid + w), every(99));
  }
  const auto f = run_rule(input_pipeline_stall_samples, b.rec());
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->estimated_speedup);
  EXPECT_NEAR(*f->estimated_speedup, 1.5, 1e-9);
  EXPECT_TRUE(contains(f->detail, "6 (the CPUs less 2)"));
  EXPECT_TRUE(contains(f->recommendation, "raise num_workers to 6"));
}

// A saturated main process without any sign of loading (no workers, no reads) is host
// work, not an input stall (issue 10: a loop calling .item() every step read `input`).
TEST(InputPipelineStallSamples, MainProcessSaturatedWithoutLoadingIsHostWork) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(10));
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(100));
  EXPECT_FALSE(run_rule(input_pipeline_stall_samples, b.rec()));
  const auto f = run_rule(host_work_samples, b.rec());
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
  EXPECT_FALSE(f->estimated_speedup);  // which work would go, samples cannot say
  EXPECT_TRUE(contains(f->title, "main process"));
  EXPECT_TRUE(contains(f->detail, "chokepoint run --trace"));
  const Diagnosis d = run_diagnosis(b.rec());
  EXPECT_EQ(d.bound, Category::kHost);
}

// The same process reading its data from storage (num_workers=0 over files) is loading.
TEST(InputPipelineStallSamples, MainProcessReadingItsDataIsAnInputStall) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(10));
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(100));
  b.series(MetricId::kProcReadBytesPerS, Entity::process(kPid), every(200e6));
  const auto f = run_rule(input_pipeline_stall_samples, b.rec());
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
  EXPECT_TRUE(contains(f->detail, "read its data from storage"));
  EXPECT_FALSE(run_rule(host_work_samples, b.rec()));
  EXPECT_EQ(run_diagnosis(b.rec()).bound, Category::kInput);
}

TEST(InputPipelineStallSamples, FallsBackToSmActivityWithoutUtilization) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(std::numeric_limits<double>::quiet_NaN()));
  b.series(MetricId::kGpuSmActive, kGpu, even_ticks(every(15)));
  b.process(kPid + 1, ProcessRole::kDataLoaderWorker);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid + 1), every(99));
  const auto f = run_rule(input_pipeline_stall_samples, b.rec());
  ASSERT_TRUE(f);
  // Active from tick 0 to 58 (the last GPM reading); every tick holds 15%.
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
  EXPECT_NEAR(ev(*f, "gpu_busy_in_stalled_ticks_pct").value, 15.0, 1e-9);
}

TEST(InputPipelineStallSamples, FedGpuOrIdleLoaderDoesNotFire) {
  RecordingBuilder fed;  // workers saturated, GPU busy: the loader keeps up
  fed.gpu(0);
  fed.series(MetricId::kGpuUtilization, kGpu, every(95));
  fed.process(kPid + 1, ProcessRole::kDataLoaderWorker);
  fed.series(MetricId::kProcCpuPct, Entity::process(kPid + 1), every(100));
  EXPECT_FALSE(run_rule(input_pipeline_stall_samples, fed.rec()));
  RecordingBuilder idle;  // GPU starved but nothing CPU-bound: not the loader
  idle.gpu(0);
  idle.series(MetricId::kGpuUtilization, kGpu, every(20));
  idle.process(kPid, ProcessRole::kLaunched);
  idle.process(kPid + 1, ProcessRole::kDataLoaderWorker);
  idle.series(MetricId::kProcCpuPct, Entity::process(kPid), every(40));
  idle.series(MetricId::kProcCpuPct, Entity::process(kPid + 1), every(30));
  EXPECT_FALSE(run_rule(input_pipeline_stall_samples, idle.rec()));
}

// The main process saturated, the GPU starved: the GPU's own readings tell an input stall
// from launch overhead (kernels running, SMs empty) and pageable copies (PCIe busy).
RecordingBuilder main_bound(double util, double sm, double pcie_bytes_per_s) {
  RecordingBuilder b;
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, kGpu, every(util));
  b.series(MetricId::kGpuSmActive, kGpu, even_ticks(every(sm)));
  b.series(MetricId::kGpuPcieRxBytesPerS, kGpu, even_ticks(every(pcie_bytes_per_s)));
  b.series(MetricId::kGpuPcieTxBytesPerS, kGpu, even_ticks(every(0)));
  b.series(MetricId::kGpuPcieLinkGenMax, kGpu, every(5));
  b.series(MetricId::kGpuPcieLinkWidthMax, kGpu, every(16));
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(100));
  return b;
}

TEST(StarvationCauses, TinyKernelsAreLaunchOverheadNotInput) {
  // launch_bound on the H200: 19% utilization, 0.3% SM activity, 0.12 GB/s.
  const auto rec = main_bound(20, 0.3, 0.12e9).rec();
  EXPECT_FALSE(run_rule(input_pipeline_stall_samples, rec));
  EXPECT_FALSE(run_rule(pageable_memcpy_samples, rec));
  const auto f = run_rule(launch_overhead_samples, rec);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "launch-overhead");
  EXPECT_EQ(f->category, Category::kHost);
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
  EXPECT_NEAR(ev(*f, "gpu_utilization_pct").value, 20.0, 1e-9);
  EXPECT_NEAR(ev(*f, "sm_active_pct").value, 0.3, 1e-9);
  EXPECT_TRUE(contains(f->recommendation, "CUDA Graph"));
}

TEST(StarvationCauses, CopiesPacedByTheCpuArePageableMemcpy) {
  // pageable_copy on the H200: 17% utilization, 3.4% SM, 7.2 GB/s host -> GPU.
  const auto rec = main_bound(17, 3.4, 7.2e9).rec();
  EXPECT_FALSE(run_rule(input_pipeline_stall_samples, rec));
  EXPECT_FALSE(run_rule(launch_overhead_samples, rec));
  const auto f = run_rule(pageable_memcpy_samples, rec);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "pageable-memcpy");
  EXPECT_EQ(f->category, Category::kTransfer);
  EXPECT_NEAR(ev(*f, "pcie_gb_per_s").value, 7.2, 1e-9);
  EXPECT_NEAR(ev(*f, "pcie_link_gb_per_s").value, 3.938 * 16, 1e-9);
  EXPECT_TRUE(contains(f->recommendation, "pin_memory"));
  EXPECT_EQ(run_diagnosis(rec).bound, Category::kTransfer);
}

TEST(StarvationCauses, AnIdleGpuWithoutLoadingEvidenceIsHostWork) {
  // input_bound on the H200 (num_workers=0, batches made in memory): 3.8% utilization,
  // 2.9% SM, 0.14 GB/s; nothing says the main process loads data rather than runs Python.
  const auto rec = main_bound(3.8, 2.9, 0.14e9).rec();
  EXPECT_FALSE(run_rule(input_pipeline_stall_samples, rec));
  EXPECT_TRUE(run_rule(host_work_samples, rec));
  EXPECT_FALSE(run_rule(launch_overhead_samples, rec));
  EXPECT_FALSE(run_rule(pageable_memcpy_samples, rec));
  EXPECT_EQ(run_diagnosis(rec).bound, Category::kHost);
}

}  // namespace
}  // namespace chokepoint::rules::testing
