// The GPU sampler on the fake NVML of tests/fake_nvml: the real dlopen path, two GPUs,
// GPM from snapshot pairs, a GPU without GPM, an old driver without GPM symbols, and
// the PID matching of the process tree.
#include "sampler/gpu/gpu_sampler.h"

#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <set>

#ifndef CHOKEPOINT_FAKE_NVML_DIR
#define CHOKEPOINT_FAKE_NVML_DIR ""
#define CHOKEPOINT_FAKE_NVML_SCENARIOS ""
#endif

namespace chokepoint::sampler::gpu {
namespace {

using samples::Entity;
using samples::MetricId;
using samples::Tick;

constexpr int64_t kMs = 1'000'000;

double find(const Tick& t, MetricId m, const Entity& e) {
  for (const auto& s : t.samples) {
    if (s.metric == m && s.entity == e) return s.valid ? s.value : -1.0;
  }
  return std::nan("");
}

class GpuSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(CHOKEPOINT_FAKE_NVML_DIR).empty()) GTEST_SKIP() << "fake NVML not built";
    unsetenv(nvml::kLibraryEnvVar);
  }
  void TearDown() override { unsetenv("FAKE_NVML_CONFIG"); }
  std::unique_ptr<nvml::Nvml> open(const std::string& lib, const std::string& scenario) {
    setenv("FAKE_NVML_CONFIG", (std::string(CHOKEPOINT_FAKE_NVML_SCENARIOS) + "/" + scenario).c_str(), 1);
    auto r = nvml::Nvml::open({std::string(CHOKEPOINT_FAKE_NVML_DIR) + "/lib" + lib + ".so"});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : nullptr;
  }
};

TEST_F(GpuSamplerTest, ClassicEveryTickGpmFromPairsNoFasterThanTheInterval) {
  auto n = open("fake_nvml", "h200_busy_2gpu.txt");
  ASSERT_NE(n, nullptr);
  GpuSampler s(*n);
  ASSERT_EQ(s.device_count(), 2u);
  const Entity g0 = Entity::gpu(0), g1 = Entity::gpu(1);

  Tick t0;
  s.sample({0, 0}, t0);
  EXPECT_EQ(find(t0, MetricId::kGpuUtilization, g0), 100);
  EXPECT_EQ(find(t0, MetricId::kGpuMemoryUsedBytes, g0), 70.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(find(t0, MetricId::kGpuPowerW, g0), 689.0);
  EXPECT_DOUBLE_EQ(find(t0, MetricId::kGpuPowerLimitW, g0), 700.0);
  EXPECT_EQ(find(t0, MetricId::kGpuSmClockMhz, g0), 1470);
  EXPECT_EQ(find(t0, MetricId::kGpuClockEventReasons, g0), 4);
  EXPECT_EQ(find(t0, MetricId::kGpuPcieLinkGen, g1), 4);
  EXPECT_EQ(find(t0, MetricId::kGpuPcieLinkGenMax, g1), 5);
  EXPECT_EQ(find(t0, MetricId::kGpuTemperatureC, g1), -1);                // NOT_SUPPORTED: invalid, not 0
  EXPECT_TRUE(std::isnan(find(t0, MetricId::kGpuSmActive, g0)));          // one GPM snapshot so far
  EXPECT_EQ(find(t0, MetricId::kGpuSmActive, g1), -1);                    // no GPM on GPU 1
  EXPECT_EQ(find(t0, MetricId::kGpuPcieRxBytesPerS, g1), 2048.0 * 1024);  // classic fallback

  Tick t1;  // 50 ms later: too soon for a GPM pair, and for the blocking classic PCIe call
  s.sample({50 * kMs, 50 * kMs}, t1);
  EXPECT_TRUE(std::isnan(find(t1, MetricId::kGpuSmActive, g0)));
  EXPECT_TRUE(std::isnan(find(t1, MetricId::kGpuPcieRxBytesPerS, g1)));
  EXPECT_EQ(find(t1, MetricId::kGpuUtilization, g0), 100);

  Tick t2;
  s.sample({100 * kMs, 100 * kMs}, t2);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuSmActive, g0), 96.6);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuSmOccupancy, g0), 14.3);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuTensorActive, g0), 93.7);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuDramActive, g0), 16.0);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuGrEngineActive, g0), 100.0);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuPcieRxBytesPerS, g0), 100.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(find(t2, MetricId::kGpuPcieTxBytesPerS, g0), 12.5 * 1024 * 1024);

  const auto meta = s.describe();
  ASSERT_EQ(meta.size(), 2u);
  EXPECT_EQ(meta[0].name, "NVIDIA H200");
  EXPECT_EQ(meta[0].bus_id, "00000000:00:04.0");
  EXPECT_EQ(meta[1].max_link_gen, 5u);
  EXPECT_EQ(s.compute_pids(), (std::vector<std::vector<int64_t>>{{4242}, {777}}));
}

TEST_F(GpuSamplerTest, OldDriverWithoutGpmSymbolsStillSamples) {
  auto n = open("fake_nvml_legacy", "h200_busy_2gpu.txt");
  ASSERT_NE(n, nullptr);
  GpuSampler s(*n);
  Tick t0, t1;
  s.sample({0, 0}, t0);
  s.sample({200 * kMs, 200 * kMs}, t1);
  EXPECT_EQ(find(t1, MetricId::kGpuSmActive, Entity::gpu(0)), -1);
  EXPECT_EQ(find(t1, MetricId::kGpuUtilization, Entity::gpu(0)), 100);
}

TEST_F(GpuSamplerTest, NoGpuAndAGpuThatFellOffTheBus) {
  auto none = open("fake_nvml", "no_gpu.txt");
  ASSERT_NE(none, nullptr);
  GpuSampler s(*none);
  Tick t;
  s.sample({0, 0}, t);
  EXPECT_EQ(s.device_count(), 0u);
  EXPECT_TRUE(t.samples.empty());

  auto troubled = open("fake_nvml", "h200_troubled.txt");
  ASSERT_NE(troubled, nullptr);
  GpuSampler s2(*troubled);
  EXPECT_EQ(s2.device_count(), 1u);
  ASSERT_EQ(s2.skipped().size(), 1u);
  EXPECT_EQ(s2.skipped()[0].rfind("GPU 1: ", 0), 0u);
}

// Issue 13: readings no GPU can have printed as "util 250%", "4294967295 MHz" and
// "-8388608.0 TiB". Each is recorded as invalid (a gap), the sane ones beside them as values.
TEST_F(GpuSamplerTest, ImpossibleReadingsAreInvalidNotValues) {
  auto n = open("fake_nvml", "h200_nonsense.txt");
  ASSERT_NE(n, nullptr);
  GpuSampler s(*n);
  ASSERT_EQ(s.device_count(), 1u);
  const Entity g0 = Entity::gpu(0);
  Tick t0, t1;
  s.sample({0, 0}, t0);
  s.sample({100 * kMs, 100 * kMs}, t1);
  EXPECT_EQ(find(t0, MetricId::kGpuUtilization, g0), -1);        // 250 %
  EXPECT_EQ(find(t0, MetricId::kGpuMemoryUtilization, g0), -1);  // same reading, not trusted either
  EXPECT_EQ(find(t0, MetricId::kGpuSmClockMhz, g0), -1);         // 4294967295 MHz
  EXPECT_EQ(find(t0, MetricId::kGpuMemoryUsedBytes, g0), -1);    // negative: more used than there is
  EXPECT_EQ(find(t0, MetricId::kGpuMemoryTotalBytes, g0), -1);   // the same call: not trusted
  EXPECT_EQ(find(t0, MetricId::kGpuPowerW, g0), -1);             // 0xFFFFFFFF mW
  EXPECT_EQ(find(t0, MetricId::kGpuTemperatureC, g0), -1);       // 0xFFFFFFFF C
  EXPECT_EQ(find(t1, MetricId::kGpuSmActive, g0), -1);           // GPM 250 %
  EXPECT_EQ(find(t1, MetricId::kGpuPcieTxBytesPerS, g0), -1);    // GPM -5 MiB/s
  // The sane readings of the same GPU stay values.
  EXPECT_EQ(find(t0, MetricId::kGpuMemClockMhz, g0), 3201);
  EXPECT_DOUBLE_EQ(find(t0, MetricId::kGpuPowerLimitW, g0), 700.0);
  EXPECT_EQ(find(t0, MetricId::kGpuPcieLinkGen, g0), 5);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kGpuTensorActive, g0), 93.7);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kGpuPcieRxBytesPerS, g0), 100.0 * 1024 * 1024);

  // At the NVML layer, for every caller (doctor too): the reading fails with kOutOfRange.
  const auto dev = n->device(0);
  ASSERT_TRUE(dev.valid);
  const auto rx = dev.value.pcie_throughput_kbps(nvml::PcieDirection::kRx);  // 0xFFFFFFFF KB/s
  EXPECT_FALSE(rx.valid);
  EXPECT_EQ(rx.error, nvml::kOutOfRange);
  EXPECT_EQ(dev.value.pcie_throughput_kbps(nvml::PcieDirection::kTx).value_or(0), 1024u);
  EXPECT_EQ(dev.value.clock_mhz(nvml::Clock::kSm).error, nvml::kOutOfRange);
  EXPECT_EQ(dev.value.memory_info().error, nvml::kOutOfRange);
  EXPECT_EQ(dev.value.utilization().error, nvml::kOutOfRange);
  EXPECT_EQ(n->error_string(nvml::kOutOfRange), "an impossible value (out of range): not recorded");
}

TEST(NvmlRange, WithinKeepsTheBoundsAndFailures) {
  EXPECT_TRUE(nvml::within(nvml::Value<unsigned>::ok(100), 0u, 100u).valid);
  EXPECT_EQ(nvml::within(nvml::Value<unsigned>::ok(101), 0u, 100u).error, nvml::kOutOfRange);
  EXPECT_EQ(nvml::within(nvml::Value<int>::ok(-51), -50, 200).error, nvml::kOutOfRange);
  EXPECT_EQ(nvml::within(nvml::Value<unsigned>::fail(3), 0u, 100u).error, 3);  // its own failure kept
}

TEST(MatchGpuProcesses, MatchedNoneYetAndContainerMismatch) {
  const GpuUse matched = match_gpu_processes({{4242}, {777}}, {4242, 4300});
  EXPECT_EQ(matched.gpus, (std::vector<unsigned>{0}));
  EXPECT_FALSE(matched.pid_match_failed);
  EXPECT_TRUE(matched.note.empty());

  const GpuUse idle = match_gpu_processes({{}, {}}, {4242});
  EXPECT_TRUE(idle.gpus.empty());
  EXPECT_FALSE(idle.pid_match_failed);

  // In a container NVML reports host PIDs the tree never sees (and that do not exist here).
  auto nowhere = [](int64_t) { return false; };
  const GpuUse container = match_gpu_processes({{91234}, {}}, {42, 43}, nowhere);
  EXPECT_EQ(container.gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(container.pid_match_failed);
  EXPECT_EQ(container.note, "all GPUs, PID match failed");
}

// Issue 47: PIDs of another namespace on the GPUs, and a command that holds no NVIDIA
// device open (`run -- sleep 2`): it runs no CUDA, the GPUs are someone else's. Unreadable
// fd tables (nullopt) or a device held open keep the container fallback.
TEST(MatchGpuProcesses, ACommandWithoutAGpuOpenUsesNoneInAContainer) {
  auto nowhere = [](int64_t) { return false; };
  const GpuUse none = match_gpu_processes({{91234}, {91235}}, {42}, nowhere, [] { return std::optional<bool>(false); });
  EXPECT_TRUE(none.gpus.empty());
  EXPECT_FALSE(none.pid_match_failed);
  EXPECT_TRUE(none.note.empty());
  const GpuUse held = match_gpu_processes({{91234}, {}}, {42}, nowhere, [] { return std::optional<bool>(true); });
  EXPECT_EQ(held.gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(held.pid_match_failed);
  const GpuUse unknown = match_gpu_processes({{91234}, {}}, {42}, nowhere, [] { return std::optional<bool>(); });
  EXPECT_TRUE(unknown.pid_match_failed);
  // The real reader: this test holds no NVIDIA device (there is none in CI, and no CUDA
  // here); a PID past pid_max has no fd table to read.
  EXPECT_EQ(holds_nvidia_device({getpid()}), std::optional<bool>(false));
  EXPECT_EQ(holds_nvidia_device({int64_t{1} << 40}), std::nullopt);
}

// Issue 13: a CPU-only command run beside another user's GPU job. That job's PIDs exist in
// this namespace, so the match did not fail: the command uses no GPU, and the other job's
// load must not become its verdict.
TEST(MatchGpuProcesses, AnotherJobOnTheGpuIsNotTheCommands) {
  const std::set<int64_t> here = {5000, 5001};
  auto exists = [&](int64_t p) { return here.count(p) > 0; };
  const GpuUse other = match_gpu_processes({{5000}, {5001}}, {42, 43}, exists);
  EXPECT_TRUE(other.gpus.empty());
  EXPECT_FALSE(other.pid_match_failed);
  EXPECT_TRUE(other.note.empty());
  // One PID of the three exists here by chance (a container's small PIDs): still a mismatch.
  const GpuUse container = match_gpu_processes({{5000, 91234}, {91235}}, {42}, exists);
  EXPECT_TRUE(container.pid_match_failed);
  // The real check: this test's own PID exists, a PID past pid_max does not.
  EXPECT_TRUE(pid_exists_here(getpid()));
  EXPECT_FALSE(pid_exists_here(int64_t{1} << 40));
  EXPECT_FALSE(pid_exists_here(0));
}

// Another user's job: its processes may not be signalled (EPERM) but exist. Run as root,
// the test becomes a second user (nobody) in a child and looks at its root parent; as any
// other user it looks at PID 1 (root's).
TEST(MatchGpuProcesses, AnotherUsersProcessExists) {
  if (::geteuid() != 0) {
    EXPECT_TRUE(pid_exists_here(1));
    return;
  }
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    errno = 0;
    const bool denied = ::kill(parent, 0) != 0 && errno == EPERM;  // really another user's
    ::_exit(denied && pid_exists_here(parent) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not become nobody; 1: root's process not seen as existing";
}

}  // namespace
}  // namespace chokepoint::sampler::gpu
