// Bench evaluators: why a result of `chokepoint bench` is below par, said by the rule
// whose condition holds it back (the same ids doctor, run and analyze report: a degraded
// PCIe link is pcie-link-degraded whether a copy test, a live sample or doctor saw it).
// Each reads the measurement, its GPU's profile and the host facts bench took
// (machine/profile.h); rules::bench_causes runs them in the registry's order. Three rules
// are seen by bench alone and are defined here: profiler-attached, launch-blocking and
// io-virtualization.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "machine/bench_keys.h"
#include "rules/checks/checks.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace checks {
namespace {

using machine::BenchGroup;
namespace bench_keys = machine::bench_keys;

// Below this share of the maximum SM clock under a FFMA load the clock is being held
// down (power, thermal or locked clocks), not merely boosting less.
constexpr double kClockHeldFraction = 0.9;
// Run queue longer than the CPUs: launches wait for a core.
constexpr double kBusyLoadPerCpu = 1.0;

bool in(BenchGroup g, std::initializer_list<BenchGroup> groups) {
  return std::find(groups.begin(), groups.end(), g) != groups.end();
}

// The value of `name` in the environment bench ran in, nullopt when unset.
std::optional<std::string> env(const machine::HostInfo& h, const char* name) {
  const std::string prefix = std::string(name) + "=";
  for (const auto& e : h.env) {
    if (e.rfind(prefix, 0) == 0) return e.substr(prefix.size());
  }
  return std::nullopt;
}

std::string gen_width(int gen, int width) {
  std::string s = gen > 0 ? fmt::format("Gen{}", gen) : std::string("Gen?");
  return width > 0 ? fmt::format("{} x{}", s, width) : s;
}

std::optional<std::string> held_clock(const machine::GpuProfile& g) {
  if (g.sm_clock_under_load_mhz && g.sm_clock_max_mhz > 0 &&
      *g.sm_clock_under_load_mhz < kClockHeldFraction * g.sm_clock_max_mhz) {
    return fmt::format(
        "the SM clock under load was {:.0f} MHz of {} MHz maximum: power or thermal capping, or locked clocks "
        "(nvidia-smi -q -d PERFORMANCE,CLOCK)",
        *g.sm_clock_under_load_mhz, g.sm_clock_max_mhz);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> bench_pcie_link(const BenchEvidence& e) {
  if (e.group != BenchGroup::kPcie) return std::nullopt;
  const auto& g = e.gpu;
  const int gen = machine::pcie_gen_from_speed(g.pcie_speed_under_load);
  const int width = machine::pcie_width_from_text(g.pcie_width_under_load);
  const int gen_max = machine::pcie_gen_from_speed(g.pcie_speed_max);
  const int width_max = machine::pcie_width_from_text(g.pcie_width_max);
  if ((gen > 0 && gen_max > 0 && gen < gen_max) || (width > 0 && width_max > 0 && width < width_max)) {
    return fmt::format(
        "the PCIe link runs at {} under load while the GPU supports {}: a slot, riser, bifurcation or BIOS setting "
        "limits it (chokepoint doctor)",
        gen_width(gen, width), gen_width(gen_max, width_max));
  }
  return std::nullopt;
}

std::optional<std::string> bench_numa(const BenchEvidence& e) {
  const auto& nodes = e.host.process_numa_nodes;
  const int gpu_node = e.gpu.numa_node;
  if (e.group != BenchGroup::kPcie || gpu_node < 0 || nodes.empty() ||
      std::find(nodes.begin(), nodes.end(), gpu_node) != nodes.end()) {
    return std::nullopt;
  }
  std::string list;
  for (int n : nodes) list += (list.empty() ? "" : ",") + std::to_string(n);
  return fmt::format(
      "this process runs on NUMA node {} but the GPU hangs off node {}: copies cross the CPU interconnect "
      "(numactl --cpunodebind={} --membind={})",
      list, gpu_node, gpu_node, gpu_node);
}

std::optional<std::string> bench_gpu_shared(const BenchEvidence& e) {
  const double gib = machine::foreign_gpu_memory_gib(e.gpu);
  if (gib <= 0) return std::nullopt;
  if (e.group == BenchGroup::kPcie) {
    return fmt::format("other processes hold {:.1f} GiB on this GPU and may be copying too", gib);
  }
  if (in(e.group, {BenchGroup::kDram, BenchGroup::kL2, BenchGroup::kCompute})) {
    return fmt::format("other processes hold {:.1f} GiB on this GPU and may be running on it", gib);
  }
  return std::nullopt;
}

std::optional<std::string> bench_clock(const BenchEvidence& e) {
  const auto& g = e.gpu;
  if (e.group == BenchGroup::kCompute && e.m.clock_mhz && g.sm_clock_max_mhz > 0 &&
      *e.m.clock_mhz < kClockHeldFraction * g.sm_clock_max_mhz) {
    return fmt::format(
        "the SM clock right after the GEMMs was {:.0f} MHz of {} MHz maximum: the GPU holds its power limit under "
        "tensor load (nvidia-smi -q -d PERFORMANCE shows SW Power Cap); a higher power limit or better cooling "
        "raises it",
        *e.m.clock_mhz, g.sm_clock_max_mhz);
  }
  if (in(e.group, {BenchGroup::kDram, BenchGroup::kL2, BenchGroup::kCompute})) return held_clock(g);
  return std::nullopt;
}

std::optional<std::string> bench_tf32_off(const BenchEvidence& e) {
  if (e.group == BenchGroup::kCompute && e.m.key == bench_keys::kGemmTf32 &&
      env(e.host, "NVIDIA_TF32_OVERRIDE") == "0") {
    return "NVIDIA_TF32_OVERRIDE=0 turns TF32 tensor cores off";
  }
  return std::nullopt;
}

std::optional<std::string> bench_pageable(const BenchEvidence& e) {
  if (e.group != BenchGroup::kPageable) return std::nullopt;
  return "pageable memory is staged through a driver buffer by the CPU; pin host buffers "
         "(DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True";
}

std::optional<std::string> bench_host_busy(const BenchEvidence& e) {
  const auto& h = e.host;
  if (e.group != BenchGroup::kLaunch || h.cpus <= 0 || h.loadavg_1m <= kBusyLoadPerCpu * h.cpus) return std::nullopt;
  return fmt::format("the host is busy (load {:.1f} on {} CPUs): launches wait for a core", h.loadavg_1m, h.cpus);
}

std::optional<std::string> bench_governor(const BenchEvidence& e) {
  if (e.group != BenchGroup::kLaunch || e.host.cpu_governor != "powersave") return std::nullopt;
  return "the CPU frequency governor is 'powersave': launch cost scales with the CPU clock "
         "(cpupower frequency-set -g performance)";
}

std::optional<std::string> bench_profiler(const BenchEvidence& e) {
  if (e.group != BenchGroup::kLaunch) return std::nullopt;
  std::string out;
  if (auto v = env(e.host, "CUDA_INJECTION64_PATH")) {
    out = "a profiler or tracer is injected (CUDA_INJECTION64_PATH=" + *v +
          "): CUPTI activity tracing adds 2-4 us per launch";
  }
  if (auto v = env(e.host, "LD_PRELOAD"))
    out += (out.empty() ? "" : "; ") + ("LD_PRELOAD=" + *v) + " may intercept CUDA calls";
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<std::string> bench_launch_blocking(const BenchEvidence& e) {
  if (e.group != BenchGroup::kLaunch || env(e.host, "CUDA_LAUNCH_BLOCKING") != "1") return std::nullopt;
  return "CUDA_LAUNCH_BLOCKING=1 makes every launch wait for the kernel";
}

std::optional<std::string> bench_io_virtualization(const BenchEvidence& e) {
  if (e.group == BenchGroup::kPcie && e.host.virtual_machine) {
    return "virtual machine: DMA passes through the hypervisor's IOMMU mappings";
  }
  if (e.group == BenchGroup::kPcie && e.host.iommu) {
    return "the IOMMU is on: DMA address translation can cost bandwidth (iommu=pt)";
  }
  if (e.group == BenchGroup::kLaunch && e.host.virtual_machine) {
    return "virtual machine: doorbells and interrupts pass through the hypervisor";
  }
  return std::nullopt;
}

}  // namespace checks

// The rules bench alone sees (listed in registry.cc); their texts are what
// `chokepoint explain <id>` prints.
extern const Rule profiler_attached_rule = {
    .id = "profiler-attached",
    .category = Category::kHost,
    .bench = checks::bench_profiler,
    .meaning =
        "A profiler or tracer is injected into the process (CUDA_INJECTION64_PATH), or a library is "
        "preloaded that may intercept CUDA calls: every launch costs more.",
    .detection = "bench: the environment it ran in, when its launch latency is below par.",
    .action = "Run the measurement, or the job, without the tracer (unset CUDA_INJECTION64_PATH, LD_PRELOAD).",
};

extern const Rule launch_blocking_rule = {
    .id = "launch-blocking",
    .category = Category::kSync,
    .bench = checks::bench_launch_blocking,
    .meaning = "CUDA_LAUNCH_BLOCKING=1: every kernel launch waits for the kernel to finish (a debugging setting).",
    .detection = "bench: the environment it ran in, when its launch latency is below par.",
    .action = "Unset CUDA_LAUNCH_BLOCKING outside debugging.",
};

extern const Rule io_virtualization_rule = {
    .id = "io-virtualization",
    .category = Category::kTransfer,
    .bench = checks::bench_io_virtualization,
    .meaning =
        "The GPU's DMA and doorbells pass through a hypervisor or an IOMMU: copies and launches cost "
        "more than on bare metal.",
    .detection = "bench: the cpuinfo hypervisor flag and /sys/class/iommu, when copies or launches are below par.",
    .action =
        "On bare metal, iommu=pt (passthrough) on the kernel command line; in a VM, GPU passthrough with "
        "the hypervisor's recommended IOMMU settings.",
};

}  // namespace chokepoint::rules
