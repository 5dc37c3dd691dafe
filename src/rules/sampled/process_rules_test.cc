// gil-contention and numa-mismatch on synthetic recordings (60 ticks at 100 ms).
#include "rules/sampled/live_test_util.h"

namespace chokepoint::rules::testing {
namespace {

constexpr int64_t kPid = RecordingBuilder::kLaunchedPid;

// One process with `n` threads at `pct` each, visited in round robin (one per tick), and
// process CPU their sum.
RecordingBuilder threads(int n, double pct, const std::string& comm = "python3", double switches_per_s = 150) {
  RecordingBuilder b;
  b.process(kPid, ProcessRole::kLaunched, comm);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(n * pct));
  for (int k = 0; k < n; ++k) {
    const Entity t = Entity::thread(kPid, kPid + k);
    auto visit = [n, k](double v) {
      return [=](int i) { return i % n == k ? std::optional<double>(v) : std::nullopt; };
    };
    b.series(MetricId::kThreadCpuPct, t, visit(pct));
    b.series(MetricId::kThreadCtxVoluntaryPerS, t, visit(switches_per_s));
  }
  return b;
}

TEST(GilContention, FourThreadsSharingOneCoreFire) {
  RecordingBuilder b = threads(4, 25);
  const auto f = run_rule(gil_contention, b.rec());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "gil-contention");
  EXPECT_EQ(f->category, Category::kHost);
  EXPECT_EQ(ev(*f, "busy_threads").value, 4.0);
  EXPECT_NEAR(ev(*f, "busy_threads_cpu_sum_pct").value, 100.0, 1e-9);
  EXPECT_NEAR(ev(*f, "process_cpu_mean_pct").value, 100.0, 1e-9);
  EXPECT_NEAR(ev(*f, "voluntary_switches_per_busy_thread_per_s").value, 150.0, 1e-9);
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
}

TEST(GilContention, OneBusyThreadDoesNotFire) {
  RecordingBuilder b;
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(104));
  b.series(MetricId::kThreadCpuPct, Entity::thread(kPid, kPid), every(100));
  b.series(MetricId::kThreadCpuPct, Entity::thread(kPid, kPid + 1), every(2));
  b.series(MetricId::kThreadCpuPct, Entity::thread(kPid, kPid + 2), every(2));
  EXPECT_FALSE(run_rule(gil_contention, b.rec()));
}

TEST(GilContention, NativeThreadsOnSeveralCoresDoNotFire) {
  EXPECT_FALSE(run_rule(gil_contention, threads(4, 95).rec()));  // 380%: the GIL is released
}

// PyTorch's main thread and its autograd thread taking turns once per step: about one
// core together, but few handovers (healthy_bf16 on the H200: 59 switches/s per thread).
TEST(GilContention, RareHandoversAreNotContention) {
  EXPECT_FALSE(run_rule(gil_contention, threads(2, 50, "python3", 59).rec()));
  EXPECT_TRUE(run_rule(gil_contention, threads(2, 50, "python3", 150).rec()));
}

// With thread names recorded, PyTorch's own threads are not Python threads: the main thread
// and pt_autograd_0 handing the step back and forth (a loop calling .item() every step
// switches often) is no contention.
TEST(GilContention, NamedNativeThreadsAreNotRivals) {
  for (const char* second : {"pt_autograd_0", "python3"}) {
    RecordingBuilder b;
    b.process(kPid, ProcessRole::kLaunched).thread_names = {{kPid, "python3"}, {kPid + 1, second}};
    b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(100));
    for (int k = 0; k < 2; ++k) {
      b.series(MetricId::kThreadCpuPct, Entity::thread(kPid, kPid + k), every(50));
      b.series(MetricId::kThreadCtxVoluntaryPerS, Entity::thread(kPid, kPid + k), every(300));
    }
    EXPECT_EQ(run_rule(gil_contention, b.rec()).has_value(), std::string(second) == "python3") << second;
  }
}

// A saturated main thread and a helper that mostly waits in native code (a DataLoader's
// pin-memory thread) are not taking turns: the main thread is not short of the GIL.
TEST(GilContention, ABusiestThreadNearAFullCoreIsNotContention) {
  RecordingBuilder b;
  b.process(kPid, ProcessRole::kLaunched);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(115));
  b.series(MetricId::kThreadCpuPct, Entity::thread(kPid, kPid), every(90));
  b.series(MetricId::kThreadCpuPct, Entity::thread(kPid, kPid + 1), every(25));
  EXPECT_FALSE(run_rule(gil_contention, b.rec()));
}

TEST(GilContention, NotPythonDoesNotFire) { EXPECT_FALSE(run_rule(gil_contention, threads(4, 25, "server").rec())); }

// Two NUMA nodes of 16 CPUs; GPU 0 is local to node 0 (CPUs 0-15) and used by kPid.
RecordingBuilder numa(std::vector<unsigned> allowed) {
  RecordingBuilder b;
  b.host_fact("cpus", "32");
  b.host_fact("numa_nodes", "2");
  samples::GpuMeta& g = b.gpu(0);
  for (unsigned c = 0; c < 16; ++c) g.local_cpus.push_back(c);
  g.numa_node = 0;
  g.pids = {kPid};
  b.series(MetricId::kGpuUtilization, Entity::gpu(0), every(90));
  b.process(kPid, ProcessRole::kLaunched).cpus_allowed = std::move(allowed);
  b.series(MetricId::kProcCpuPct, Entity::process(kPid), every(100));
  return b;
}

std::vector<unsigned> cpus(unsigned first, unsigned last) {
  std::vector<unsigned> v;
  for (unsigned c = first; c <= last; ++c) v.push_back(c);
  return v;
}

TEST(NumaMismatch, PinnedToTheFarNode) {
  const auto f = run_rule(numa_mismatch, numa(cpus(16, 31)).rec());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "numa-mismatch");
  EXPECT_EQ(f->category, Category::kHost);
  EXPECT_EQ(ev(*f, "local_cpu_fraction_pct").value, 0.0);
  EXPECT_EQ(ev(*f, "local_cpu_fraction_pct").threshold, 50.0);
  EXPECT_NEAR(f->time_share_pct, 100.0, 1e-9);
  EXPECT_EQ(f->severity, Severity::kWarning);  // capped
  EXPECT_TRUE(contains(f->title, "16-31"));
  EXPECT_TRUE(contains(f->recommendation, "taskset -c 0-15"));
  EXPECT_TRUE(contains(f->recommendation, "--cpunodebind=0"));
}

TEST(NumaMismatch, MostlyFar) {
  const auto f = run_rule(numa_mismatch, numa(cpus(12, 31)).rec());  // 4 of 20 CPUs local
  ASSERT_TRUE(f);
  EXPECT_NEAR(ev(*f, "local_cpu_fraction_pct").value, 100.0 * 4 / 20, 1e-9);
  EXPECT_NEAR(f->time_share_pct, 100.0 * (1 - 4.0 / 20), 1e-9);
}

TEST(NumaMismatch, LocalUnpinnedOrSingleNodeDoNotFire) {
  EXPECT_FALSE(run_rule(numa_mismatch, numa(cpus(0, 15)).rec()));
  EXPECT_FALSE(run_rule(numa_mismatch, numa(cpus(0, 31)).rec()));  // unpinned
  RecordingBuilder one = numa(cpus(16, 31));
  one.host_fact("numa_nodes", "1");
  one.rec().meta.gpus[0].local_cpus = cpus(0, 31);
  EXPECT_FALSE(run_rule(numa_mismatch, one.rec()));
}

}  // namespace
}  // namespace chokepoint::rules::testing
