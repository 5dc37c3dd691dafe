#include "bench/causes.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench/host_facts.h"
#include "machine/bench_keys.h"

namespace chokepoint::bench {

namespace bench_keys = machine::bench_keys;
namespace {

// A CUDA context with cuBLASLt loaded takes up to ~1 GiB of device memory on large GPUs
// (module images, local memory reservation); more than this much missing at the start
// means another process holds it.
constexpr double kOwnContextGiB = 1.5;
// Below this share of the maximum SM clock under a FFMA load the clock is being held
// down (power, thermal or locked clocks), not merely boosting less.
constexpr double kClockHeldFraction = 0.9;
// Run queue longer than the CPUs: launches wait for a core.
constexpr double kBusyLoadPerCpu = 1.0;

bool has_env(const machine::HostInfo& h, const char* name, std::string* value = nullptr) {
  const std::string prefix = std::string(name) + "=";
  for (const auto& e : h.env) {
    if (e.rfind(prefix, 0) == 0) {
      if (value != nullptr) *value = e.substr(prefix.size());
      return true;
    }
  }
  return false;
}

std::string gen_width(int gen, int width) {
  std::string s = gen > 0 ? fmt::format("Gen{}", gen) : std::string("Gen?");
  return width > 0 ? fmt::format("{} x{}", s, width) : s;
}

void pcie_causes(const machine::GpuProfile& g, const machine::HostInfo& h, std::vector<std::string>& out) {
  const int gen = pcie_gen_from_speed(g.pcie_speed_under_load);
  const int width = pcie_width_from_text(g.pcie_width_under_load);
  const int gen_max = pcie_gen_from_speed(g.pcie_speed_max);
  const int width_max = pcie_width_from_text(g.pcie_width_max);
  if ((gen > 0 && gen_max > 0 && gen < gen_max) || (width > 0 && width_max > 0 && width < width_max)) {
    out.push_back(
        fmt::format("the PCIe link runs at {} under load while the GPU supports {}: a slot, riser, "
                    "bifurcation or BIOS setting limits it (chokepoint doctor)",
                    gen_width(gen, width), gen_width(gen_max, width_max)));
  }
  if (g.numa_node >= 0 && !h.process_numa_nodes.empty() &&
      std::find(h.process_numa_nodes.begin(), h.process_numa_nodes.end(), g.numa_node) == h.process_numa_nodes.end()) {
    std::string nodes;
    for (int n : h.process_numa_nodes) {
      if (!nodes.empty()) nodes += ',';
      nodes += std::to_string(n);
    }
    out.push_back(
        fmt::format("this process runs on NUMA node {} but the GPU hangs off node {}: copies cross the CPU "
                    "interconnect (numactl --cpunodebind={} --membind={})",
                    nodes, g.numa_node, g.numa_node, g.numa_node));
  }
  if (const double gib = foreign_gpu_memory_gib(g); gib > 0) {
    out.push_back(fmt::format("other processes hold {:.1f} GiB on this GPU and may be copying too", gib));
  }
  if (h.virtual_machine) {
    out.push_back("virtual machine: DMA passes through the hypervisor's IOMMU mappings");
  } else if (h.iommu) {
    out.push_back("the IOMMU is on: DMA address translation can cost bandwidth (iommu=pt)");
  }
}

void launch_causes(const machine::HostInfo& h, std::vector<std::string>& out) {
  std::string v;
  if (has_env(h, "CUDA_INJECTION64_PATH", &v)) {
    out.push_back("a profiler or tracer is injected (CUDA_INJECTION64_PATH=" + v +
                  "): CUPTI activity tracing adds 2-4 us per launch");
  }
  if (has_env(h, "LD_PRELOAD", &v)) out.push_back("LD_PRELOAD=" + v + " may intercept CUDA calls");
  if (has_env(h, "CUDA_LAUNCH_BLOCKING", &v) && v == "1") {
    out.push_back("CUDA_LAUNCH_BLOCKING=1 makes every launch wait for the kernel");
  }
  if (h.cpus > 0 && h.loadavg_1m > kBusyLoadPerCpu * h.cpus) {
    out.push_back(
        fmt::format("the host is busy (load {:.1f} on {} CPUs): launches wait for a core", h.loadavg_1m, h.cpus));
  }
  if (h.cpu_governor == "powersave") {
    out.push_back(
        "the CPU frequency governor is 'powersave': launch cost scales with the CPU clock "
        "(cpupower frequency-set -g performance)");
  }
  if (h.virtual_machine) out.push_back("virtual machine: doorbells and interrupts pass through the hypervisor");
}

void clock_causes(const machine::GpuProfile& g, std::vector<std::string>& out) {
  if (g.sm_clock_under_load_mhz && g.sm_clock_max_mhz > 0 &&
      *g.sm_clock_under_load_mhz < kClockHeldFraction * g.sm_clock_max_mhz) {
    out.push_back(
        fmt::format("the SM clock under load was {:.0f} MHz of {} MHz maximum: power or thermal capping, or "
                    "locked clocks (nvidia-smi -q -d PERFORMANCE,CLOCK)",
                    *g.sm_clock_under_load_mhz, g.sm_clock_max_mhz));
  }
}

}  // namespace

double foreign_gpu_memory_gib(const machine::GpuProfile& g) {
  if (g.memory_bytes <= 0 || g.free_memory_bytes < 0) return 0;
  const double used = static_cast<double>(g.memory_bytes - g.free_memory_bytes) / (1u << 30);
  return used > kOwnContextGiB ? used : 0;
}

std::vector<std::string> likely_causes(Group group, const machine::Measurement& m, const machine::GpuProfile& g,
                                       const machine::HostInfo& h) {
  std::vector<std::string> out;
  switch (group) {
    case Group::kPcie:
      pcie_causes(g, h, out);
      if (out.empty()) {
        out.push_back(
            "slower than the link allows: a PCIe switch shared with other devices, or host "
            "memory bandwidth");
      }
      break;
    case Group::kPageable:
      out.push_back(
          "pageable memory is staged through a driver buffer by the CPU; pin host buffers "
          "(DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True");
      break;
    case Group::kDram:
    case Group::kL2:
      if (const double gib = foreign_gpu_memory_gib(g); gib > 0) {
        out.push_back(fmt::format("other processes hold {:.1f} GiB on this GPU and may be running on it", gib));
      }
      clock_causes(g, out);
      if (out.empty()) {
        out.push_back(
            "memory clock below its maximum (nvidia-smi -q -d CLOCK), or another process "
            "using the GPU");
      }
      break;
    case Group::kLaunch:
      launch_causes(h, out);
      if (out.empty()) out.push_back("slow host CPU (single-thread speed sets the launch cost)");
      break;
    case Group::kCompute: {
      std::string v;
      if (m.key == bench_keys::kGemmTf32 && has_env(h, "NVIDIA_TF32_OVERRIDE", &v) && v == "0") {
        out.push_back("NVIDIA_TF32_OVERRIDE=0 turns TF32 tensor cores off");
      }
      if (m.clock_mhz && g.sm_clock_max_mhz > 0 && *m.clock_mhz < kClockHeldFraction * g.sm_clock_max_mhz) {
        out.push_back(
            fmt::format("the SM clock right after the GEMMs was {:.0f} MHz of {} MHz maximum: the GPU holds its power "
                        "limit under tensor load (nvidia-smi -q -d PERFORMANCE shows SW Power Cap); a higher power "
                        "limit or better cooling raises it",
                        *m.clock_mhz, g.sm_clock_max_mhz));
      } else {
        clock_causes(g, out);
      }
      if (const double gib = foreign_gpu_memory_gib(g); gib > 0) {
        out.push_back(fmt::format("other processes hold {:.1f} GiB on this GPU and may be running on it", gib));
      }
      if (out.empty()) {
        out.push_back(m.key == bench_keys::kFfmaFp32
                          ? "the SMs did not run at full clock or were shared with other work"
                          : "power capping under tensor load, or cuBLASLt chose a slow kernel for this "
                            "shape (see the note for the algorithm)");
      }
      break;
    }
    case Group::kSelftest: break;
  }
  return out;
}

}  // namespace chokepoint::bench
