// The rules' bench evaluators through the engine (rules::bench_causes, what `chokepoint
// bench` asks for each result below par): which rule names the cause, in what words. The
// GPU is the H200 of bench/testing/canned_profiles.h (1980 MHz, 141 GiB).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules/diagnose.h"

namespace chokepoint::rules {
namespace {

using machine::BenchGroup;

struct Bench {
  machine::Measurement m;
  machine::GpuProfile gpu;
  machine::HostInfo host;
  Bench() {
    gpu.name = "NVIDIA H200";
    gpu.memory_bytes = 150754820096;
    gpu.free_memory_bytes = gpu.memory_bytes - (int64_t{600} << 20);  // our own context
    gpu.sm_clock_max_mhz = 1980;
    host.cpus = 16;
    host.loadavg_1m = 1.0;
  }
  std::vector<machine::BenchCause> causes(BenchGroup g, const char* key) {
    m.key = key;
    return bench_causes(g, m, gpu, host);
  }
};

std::vector<std::string> ids(const std::vector<machine::BenchCause>& c) {
  std::vector<std::string> out;
  for (const auto& x : c) out.push_back(x.rule);
  return out;
}

TEST(BenchCauses, AHealthyMachineHasNone) {
  Bench b;
  for (BenchGroup g : {BenchGroup::kPcie, BenchGroup::kDram, BenchGroup::kL2, BenchGroup::kLaunch, BenchGroup::kCompute,
                       BenchGroup::kSelftest}) {
    EXPECT_TRUE(b.causes(g, "x").empty()) << static_cast<int>(g);
  }
}

TEST(BenchCauses, ADegradedLinkAndAFarNodeSlowCopies) {
  Bench b;
  b.gpu.pcie_speed_under_load = "16.0 GT/s PCIe";
  b.gpu.pcie_width_under_load = "16";
  b.gpu.pcie_speed_max = "32.0 GT/s PCIe";
  b.gpu.pcie_width_max = "16";
  b.gpu.numa_node = 1;
  b.host.process_numa_nodes = {0};
  const auto c = b.causes(BenchGroup::kPcie, "h2d_pinned");
  EXPECT_EQ(ids(c), (std::vector<std::string>{"pcie-link-degraded", "numa-mismatch"}));
  EXPECT_NE(c[0].text.find("Gen4 x16 under load while the GPU supports Gen5 x16"), std::string::npos) << c[0].text;
  EXPECT_NE(c[1].text.find("NUMA node 0 but the GPU hangs off node 1"), std::string::npos) << c[1].text;
  EXPECT_TRUE(b.causes(BenchGroup::kCompute, "gemm_bf16").empty()) << "the link does not slow a GEMM";
}

TEST(BenchCauses, AHeldClockSlowsComputeAndMemory) {
  Bench b;
  b.gpu.sm_clock_under_load_mhz = 1200;
  for (auto [g, key] : {std::pair{BenchGroup::kCompute, "ffma_fp32"}, std::pair{BenchGroup::kDram, "dram_read"}}) {
    const auto c = b.causes(g, key);
    ASSERT_EQ(ids(c), std::vector<std::string>{"clock-throttled"}) << key;
    EXPECT_NE(c[0].text.find("1200 MHz of 1980 MHz"), std::string::npos) << c[0].text;
  }
  // A GEMM's own clock reading, taken right after it, says more than the load's.
  b.m.clock_mhz = 1100;
  const auto c = b.causes(BenchGroup::kCompute, "gemm_bf16");
  ASSERT_EQ(ids(c), std::vector<std::string>{"clock-throttled"});
  EXPECT_EQ(c[0].text.find("the SM clock right after the GEMMs was 1100 MHz of 1980 MHz"), 0u) << c[0].text;
}

TEST(BenchCauses, OtherProcessesOnTheGpu) {
  Bench b;
  b.gpu.free_memory_bytes = b.gpu.memory_bytes - (int64_t{40} << 30);
  const auto dram = b.causes(BenchGroup::kDram, "dram_read");
  ASSERT_EQ(ids(dram), std::vector<std::string>{"gpu-shared"});
  EXPECT_EQ(dram[0].text, "other processes hold 40.0 GiB on this GPU and may be running on it");
  const auto copy = b.causes(BenchGroup::kPcie, "h2d_pinned");
  ASSERT_EQ(ids(copy), std::vector<std::string>{"gpu-shared"});
  EXPECT_EQ(copy[0].text, "other processes hold 40.0 GiB on this GPU and may be copying too");
}

TEST(BenchCauses, SlowLaunchesBlameTheTracerTheSettingsAndTheVm) {
  Bench b;
  b.host.env = {"CUDA_INJECTION64_PATH=/opt/libtracer.so", "CUDA_LAUNCH_BLOCKING=1"};
  b.host.virtual_machine = true;
  b.host.cpu_governor = "powersave";
  b.host.loadavg_1m = 40;
  const auto c = b.causes(BenchGroup::kLaunch, "launch_latency");
  EXPECT_EQ(ids(c), (std::vector<std::string>{"cpu-oversubscribed", "cpu-governor", "profiler-attached",
                                              "launch-blocking", "io-virtualization"}));
  EXPECT_EQ(c[0].text, "the host is busy (load 40.0 on 16 CPUs): launches wait for a core");
  EXPECT_EQ(c[2].text.find("a profiler or tracer is injected (CUDA_INJECTION64_PATH=/opt/libtracer.so)"), 0u);
  EXPECT_EQ(c[4].text, "virtual machine: doorbells and interrupts pass through the hypervisor");
}

TEST(BenchCauses, PageableCopiesAndTf32TurnedOff) {
  Bench b;
  const auto pageable = b.causes(BenchGroup::kPageable, "h2d_pageable");
  ASSERT_EQ(ids(pageable), std::vector<std::string>{"pageable-memcpy"});
  EXPECT_NE(pageable[0].text.find("pin host buffers"), std::string::npos);
  b.host.env = {"NVIDIA_TF32_OVERRIDE=0"};
  EXPECT_EQ(ids(b.causes(BenchGroup::kCompute, "gemm_tf32")), std::vector<std::string>{"no-tensor-cores"});
  EXPECT_TRUE(b.causes(BenchGroup::kCompute, "gemm_bf16").empty()) << "the override is TF32's only";
}

TEST(BenchCauses, EveryCauseIsARuleWithItsExplainTexts) {
  for (const Rule& r : all_rules()) {
    if (r.bench == nullptr) continue;
    EXPECT_FALSE(r.meaning.empty()) << r.id;
    EXPECT_FALSE(r.action.empty()) << r.id;
  }
  EXPECT_NE(find_rule("io-virtualization"), nullptr);
}

}  // namespace
}  // namespace chokepoint::rules
