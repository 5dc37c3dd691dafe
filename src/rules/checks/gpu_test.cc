// Per-GPU and driver checks from hand-written facts: no NVML involved.
#include "rules/checks/checks.h"

#include "rules/diagnose.h"

#include <gtest/gtest.h>

#include "samples/clock_reasons.h"

namespace chokepoint::rules::checks {
namespace {

using namespace doctor;

using nvml::Value;

template <typename T>
Value<T> ok(T v) {
  return Value<T>::ok(std::move(v));
}
template <typename T>
Value<T> bad(int code) {
  return Value<T>::fail(code);
}

// A healthy, idle Hopper GPU on a Gen5 x16 link.
GpuFacts healthy() {
  GpuFacts g;
  g.index = 0;
  g.name = ok<std::string>("NVIDIA H200");
  g.pci = ok(nvml::PciInfo{"00000000:3B:00.0", 0, 0x3b, 0, 0x233510de});
  g.memory = ok(nvml::MemoryInfo{143771ull << 20, (143771ull - 540) << 20, 0, 540ull << 20});
  g.link_gen = ok(5u);
  g.link_gen_max = ok(5u);
  g.link_gen_gpu_max = ok(5u);
  g.link_width = ok(16u);
  g.link_width_max = ok(16u);
  g.sm_clock = ok(1980u);
  g.sm_clock_max = ok(1980u);
  g.mem_clock = ok(3201u);
  g.mem_clock_max = ok(3201u);
  g.clock_reasons = ok<uint64_t>(samples::kReasonGpuIdle);
  g.pstate = ok(0);
  g.power_mw = ok(75000u);
  g.power_limit_mw = ok(700000u);
  g.power_default_limit_mw = ok(700000u);
  g.temperature_c = ok(30);
  g.utilization = ok(nvml::Utilization{0, 0});
  g.persistence = ok(true);
  g.ecc_mode = ok(nvml::EccMode{true, true});
  g.ecc_volatile_uncorrected = ok<uint64_t>(0);
  g.ecc_aggregate_uncorrected = ok<uint64_t>(0);
  g.retired_sbe = bad<unsigned>(3);
  g.retired_dbe = bad<unsigned>(3);
  g.retired_pending = bad<bool>(3);
  g.remapped = ok(nvml::RemappedRows{0, 0, false, false});
  g.processes = ok(std::vector<GpuProcess>{});
  g.nvml_cpu_affinity = ok(std::vector<unsigned>{0, 1, 2, 3});
  g.gpm_supported = ok(true);
  return g;
}

NvmlFacts nvml_facts() {
  NvmlFacts n;
  n.available = true;
  n.driver_version = ok<std::string>("580.159.04");
  n.cuda_driver_version = ok(13000);
  n.device_count = ok(1u);
  n.error_text[3] = "Not Supported";
  n.gpus.push_back(healthy());
  return n;
}

TEST(GpuChecks, HealthyGpuIsAllOk) {
  const NvmlFacts n = nvml_facts();
  HostFacts h;
  h.allowed_cpus = std::vector<unsigned>{0, 1, 2, 3};
  h.numa_nodes_online = std::vector<unsigned>{0};
  int per_gpu = 0;
  for (const Assessment& c : assess_machine(MachineEvidence{h, n})) {
    if (c.scope != Assessment::Scope::kGpu) continue;
    ++per_gpu;
    EXPECT_EQ(verdict_of(c), "ok") << c.id << ": " << c.observed << " / " << c.advice;
    EXPECT_EQ(c.gpu, 0);
  }
  EXPECT_EQ(per_gpu, 7) << "pcie, clocks, numa, persistence, memory errors, other processes, GPM";
}

TEST(GpuChecks, LinkDownshiftAtIdleIsFine) {
  GpuFacts g = healthy();
  g.link_gen = ok(1u);
  const Assessment c = check_pcie_link(g, nvml_facts());
  EXPECT_EQ(verdict_of(c), "ok");
  EXPECT_NE(c.advice.find("idle"), std::string::npos);
  EXPECT_NE(c.observed.find("Gen1 x16 now"), std::string::npos) << c.observed;
  EXPECT_NE(c.expected.find("Gen5 x16 under load (~63 GB/s"), std::string::npos) << c.expected;
}

TEST(GpuChecks, LinkDownshiftUnderLoadWarns) {
  GpuFacts g = healthy();
  g.link_gen = ok(3u);
  g.clock_reasons = ok<uint64_t>(samples::kReasonSwPowerCap);
  g.utilization = ok(nvml::Utilization{95, 40});
  EXPECT_EQ(verdict_of(check_pcie_link(g, nvml_facts())), "warning");
}

TEST(GpuChecks, NarrowLinkWarnsEvenAtIdle) {
  GpuFacts g = healthy();
  g.link_width = ok(8u);
  const Assessment c = check_pcie_link(g, nvml_facts());
  EXPECT_EQ(verdict_of(c), "warning");
  EXPECT_NE(c.advice.find("x8 of x16"), std::string::npos);
}

TEST(GpuChecks, SlotSlowerThanGpuWarns) {
  GpuFacts g = healthy();
  g.link_gen = ok(4u);
  g.link_gen_max = ok(4u);
  const Assessment c = check_pcie_link(g, nvml_facts());
  EXPECT_EQ(verdict_of(c), "warning");
  EXPECT_NE(c.observed.find("GPU itself supports Gen5"), std::string::npos);
}

TEST(GpuChecks, UnreadableLinkIsSkippedWithTheReason) {
  GpuFacts g = healthy();
  g.link_gen = bad<unsigned>(3);
  const Assessment c = check_pcie_link(g, nvml_facts());
  EXPECT_EQ(verdict_of(c), "skip");
  EXPECT_NE(c.observed.find("not supported on this GPU (Not Supported)"), std::string::npos) << c.observed;
}

TEST(GpuChecks, ClockReasons) {
  const NvmlFacts n = nvml_facts();
  GpuFacts g = healthy();
  g.clock_reasons = ok<uint64_t>(samples::kReasonSwPowerCap);
  EXPECT_EQ(verdict_of(check_clocks(g, n)), "ok") << "the power cap under load is normal";
  g.clock_reasons = ok<uint64_t>(samples::kReasonSwThermalSlowdown);
  EXPECT_EQ(verdict_of(check_clocks(g, n)), "warning");
  for (uint64_t bit :
       {samples::kReasonHwSlowdown, samples::kReasonHwThermalSlowdown, samples::kReasonHwPowerBrakeSlowdown}) {
    g.clock_reasons = ok<uint64_t>(bit | samples::kReasonSwPowerCap);
    EXPECT_EQ(verdict_of(check_clocks(g, n)), "critical") << bit;
  }
  g.clock_reasons = bad<uint64_t>(3);
  const Assessment skipped = check_clocks(g, n);
  EXPECT_EQ(verdict_of(skipped), "skip");
  EXPECT_NE(skipped.observed.find("SM 1980/1980 MHz"), std::string::npos) << "clocks still shown";
}

TEST(GpuChecks, LoweredPowerLimitWarns) {
  GpuFacts g = healthy();
  g.power_limit_mw = ok(400000u);
  const Assessment c = check_clocks(g, nvml_facts());
  EXPECT_EQ(verdict_of(c), "warning");
  EXPECT_NE(c.advice.find("nvidia-smi -pl 700"), std::string::npos);
}

TEST(GpuChecks, PersistenceMode) {
  GpuFacts g = healthy();
  g.persistence = ok(false);
  EXPECT_EQ(verdict_of(check_persistence_mode(g, nvml_facts())), "warning");
  g.persistence = bad<bool>(3);
  EXPECT_EQ(verdict_of(check_persistence_mode(g, nvml_facts())), "skip");
}

TEST(GpuChecks, MemoryErrors) {
  const NvmlFacts n = nvml_facts();
  GpuFacts g = healthy();
  g.ecc_volatile_uncorrected = ok<uint64_t>(1);
  EXPECT_EQ(verdict_of(check_memory_errors(g, n)), "critical");
  g = healthy();
  g.ecc_aggregate_uncorrected = ok<uint64_t>(4);
  EXPECT_EQ(verdict_of(check_memory_errors(g, n)), "warning");
  g = healthy();
  g.remapped = ok(nvml::RemappedRows{0, 1, true, false});
  EXPECT_EQ(verdict_of(check_memory_errors(g, n)), "warning");
  g.remapped = ok(nvml::RemappedRows{0, 9, false, true});
  EXPECT_EQ(verdict_of(check_memory_errors(g, n)), "critical");
  g = healthy();
  g.ecc_mode = ok(nvml::EccMode{false, false});
  EXPECT_EQ(verdict_of(check_memory_errors(g, n)), "warning");
  g = healthy();
  g.retired_sbe = ok(40u);
  g.retired_dbe = ok(21u);
  g.retired_pending = ok(false);
  const Assessment pages = check_memory_errors(g, n);
  EXPECT_EQ(verdict_of(pages), "warning");
  EXPECT_NE(pages.observed.find("retired pages 61"), std::string::npos) << pages.observed;
  // A consumer GPU: nothing readable at all.
  g = healthy();
  g.ecc_mode = bad<nvml::EccMode>(3);
  g.ecc_volatile_uncorrected = bad<uint64_t>(3);
  g.ecc_aggregate_uncorrected = bad<uint64_t>(3);
  g.remapped = bad<nvml::RemappedRows>(3);
  EXPECT_EQ(verdict_of(check_memory_errors(g, n)), "skip");
}

TEST(GpuChecks, OtherProcesses) {
  const NvmlFacts n = nvml_facts();
  GpuFacts g = healthy();
  g.processes = ok(std::vector<GpuProcess>{{4242, 40ull << 30, "python3"}, {77, std::nullopt, ""}});
  const Assessment c = check_other_processes(g, n);
  EXPECT_EQ(verdict_of(c), "warning");
  EXPECT_NE(c.observed.find("2 processes hold 40 GiB: pid 4242 python3 40 GiB, pid 77 (not visible here)"),
            std::string::npos)
      << c.observed;
  // Memory in use with no process visible: another container.
  g = healthy();
  g.memory = ok(nvml::MemoryInfo{80ull << 30, 60ull << 30, 20ull << 30, std::nullopt});
  EXPECT_EQ(verdict_of(check_other_processes(g, n)), "warning");
  // The driver's own reservation is not a process.
  g.memory = ok(nvml::MemoryInfo{80ull << 30, (80ull << 30) - (600ull << 20), 600ull << 20, std::nullopt});
  EXPECT_EQ(verdict_of(check_other_processes(g, n)), "ok");
}

TEST(GpuChecks, NumaAffinity) {
  GpuFacts g = healthy();
  g.sysfs.numa_node = 1;
  g.sysfs.local_cpus = std::vector<unsigned>{16, 17, 18, 19};
  HostFacts h;
  h.numa_nodes_online = std::vector<unsigned>{0, 1};
  h.allowed_cpus = std::vector<unsigned>{0, 1, 2, 3};
  Assessment c = check_numa_affinity(g, h);
  EXPECT_EQ(verdict_of(c), "warning");
  EXPECT_NE(c.advice.find("numactl --cpunodebind=1 --membind=1"), std::string::npos);
  h.allowed_cpus = std::vector<unsigned>{16, 17};
  EXPECT_EQ(verdict_of(check_numa_affinity(g, h)), "ok");
  h.allowed_cpus = std::vector<unsigned>{0, 1, 16, 17};
  c = check_numa_affinity(g, h);
  EXPECT_EQ(verdict_of(c), "ok");
  EXPECT_NE(c.advice.find("2 of the 4 CPUs"), std::string::npos) << c.advice;
  // Firmware without NUMA information: all CPUs local, node -1.
  g.sysfs.numa_node = -1;
  g.sysfs.local_cpus = std::vector<unsigned>{0, 1, 16, 17};
  EXPECT_EQ(verdict_of(check_numa_affinity(g, h)), "skip");
  h.allowed_cpus.reset();
  EXPECT_EQ(verdict_of(check_numa_affinity(g, h)), "skip");
}

TEST(GpuChecks, Gpm) {
  GpuFacts g = healthy();
  EXPECT_EQ(verdict_of(check_gpm(g, nvml_facts())), "ok");
  g.gpm_supported = ok(false);
  EXPECT_EQ(verdict_of(check_gpm(g, nvml_facts())), "skip");
  g.gpm_supported = bad<bool>(nvml::kMissingSymbol);
  EXPECT_NE(check_gpm(g, nvml_facts()).observed.find("not provided by this driver"), std::string::npos);
}

TEST(GpuChecks, LostGpuFails) {
  GpuFacts g;
  g.index = 3;
  g.handle_error = 15;
  NvmlFacts n = nvml_facts();
  n.gpus = {g};
  const HostFacts h;
  std::vector<Assessment> checks;
  for (auto& c : assess_machine(MachineEvidence{h, n})) {
    if (c.scope == Assessment::Scope::kGpu) checks.push_back(c);
  }
  ASSERT_EQ(checks.size(), 1u) << "gpu-access alone speaks for a GPU NVML cannot open";
  EXPECT_EQ(checks[0].id, "gpu-access");
  EXPECT_EQ(verdict_of(checks[0]), "critical");
  EXPECT_EQ(checks[0].gpu, 3);
}

TEST(DriverChecks, NoDriverIsOneSkip) {
  NvmlFacts n;
  n.error = "NVIDIA driver library not found";
  const HostFacts h;
  std::vector<Assessment> checks;
  for (auto& c : assess_machine(MachineEvidence{h, n})) {
    if (c.scope != Assessment::Scope::kHost) checks.push_back(c);
  }
  ASSERT_EQ(checks.size(), 1u) << "no driver: said once, no cuda-compat, no GPU";
  EXPECT_EQ(verdict_of(checks[0]), "skip");
  EXPECT_NE(checks[0].observed.find("not found"), std::string::npos);
}

TEST(DriverChecks, TorchAgainstDriver) {
  const NvmlFacts n = nvml_facts();
  HostFacts h;
  auto compat = [&] { return check_cuda_compat(n, h); };
  EXPECT_EQ(verdict_of(compat()), "skip") << "no torch found";
  h.torch = TorchInstall{"/venv/torch", "2.11.0+cu130", "13.0"};
  EXPECT_EQ(verdict_of(compat()), "ok");
  EXPECT_TRUE(compat().advice.empty());
  h.torch->cuda = "13.2";
  EXPECT_EQ(verdict_of(compat()), "ok");
  EXPECT_NE(compat().advice.find("minor-version compatibility"), std::string::npos);
  h.torch->cuda = "14.0";
  EXPECT_EQ(verdict_of(compat()), "warning");
  h.torch->cuda.reset();
  EXPECT_EQ(verdict_of(compat()), "warning") << "CPU-only build on a GPU machine";
  EXPECT_EQ(check_nvidia_driver(n).observed, "driver 580.159.04 (runs CUDA up to 13.0), 1 GPU: NVIDIA H200");
}

}  // namespace
}  // namespace chokepoint::rules::checks
