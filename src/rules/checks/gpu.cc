#include "rules/checks/checks.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "base/cpu_list.h"
#include "doctor/format.h"
#include "samples/clock_reasons.h"

namespace chokepoint::rules::checks {

using namespace doctor;
namespace {

// An enforced power limit below this share of the board default means someone lowered
// it (nvidia-smi -pl): clocks then drop earlier under load. 10% leaves room for boards
// whose default and enforced limits differ by a few watts.
constexpr double kPowerLimitLoweredFraction = 0.90;
// Memory in use with no process visible: above the driver's own reservation and one
// idle CUDA context (~0.3-0.6 GiB on Hopper), so only real allocations by processes
// NVML cannot name (other containers, other PID namespaces) trip it.
constexpr uint64_t kHiddenMemoryMinBytes = 1ull << 30;
constexpr double kHiddenMemoryMinFraction = 0.02;
// Retired pages: boards hold at most 64 (NVIDIA, "Dynamic Page Retirement"); DCGM's
// health check flags 60 and more as a replacement candidate.
constexpr unsigned kRetiredPagesLimit = 60;

// Appends a sentence of advice without changing the outcome.
void note(Assessment& c, const std::string& advice) {
  if (!advice.empty()) c.advice += (c.advice.empty() ? "" : " ") + advice;
}

std::string gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "~%.0f GB/s", v);
  return buf;
}

std::string mhz(const nvml::Value<unsigned>& v) { return v.valid ? std::to_string(*v) : "?"; }

bool gpu_idle(const GpuFacts& g) {
  if (g.clock_reasons.valid && (*g.clock_reasons & samples::kReasonGpuIdle)) return true;
  return g.utilization.valid && g.utilization->gpu_pct == 0;
}

Assessment make(const char* id, const char* title, const GpuFacts& g) {
  return pass(id, title, Assessment::Scope::kGpu, static_cast<int>(g.index));
}

}  // namespace

Assessment check_pcie_link(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("pcie-link-degraded", "PCIe link", g);
  if (!g.link_gen.valid || !g.link_width.valid) {
    return skipped(c,
                   "link not reported: " + describe_error(n, g.link_gen.valid ? g.link_width.error : g.link_gen.error));
  }
  const unsigned gen = *g.link_gen, width = *g.link_width;
  const unsigned max_gen = g.link_gen_max.value_or(gen), max_width = g.link_width_max.value_or(width);
  const unsigned gpu_gen = std::max(g.link_gen_gpu_max.value_or(max_gen), max_gen);
  c.observed = "Gen" + std::to_string(gen) + " x" + std::to_string(width) + " now (" +
               gbps(pcie_gbps_per_direction(gen, width)) + " per direction); best this slot allows Gen" +
               std::to_string(max_gen) + " x" + std::to_string(max_width);
  if (gpu_gen > max_gen) c.observed += "; the GPU itself supports Gen" + std::to_string(gpu_gen);
  c.expected = "Gen" + std::to_string(gpu_gen) + " x" + std::to_string(max_width) + " under load (" +
               gbps(pcie_gbps_per_direction(gpu_gen, max_width)) + " per direction)";
  if (width < max_width) {
    raise(c, Severity::kWarning,
          "The link trained at x" + std::to_string(width) + " of x" + std::to_string(max_width) +
              ": host<->GPU copies get that share of the bandwidth. Width, unlike speed, does not drop to "
              "save power: reseat the card, check the slot or riser, or ask the provider.");
  }
  if (gpu_gen > max_gen) {
    raise(c, Severity::kWarning,
          "The slot or host limits the link to Gen" + std::to_string(max_gen) + " while the GPU supports Gen" +
              std::to_string(gpu_gen) + ": use a Gen" + std::to_string(gpu_gen) +
              " slot, or check the BIOS PCIe speed setting and any riser or switch in between.");
  }
  if (gen < max_gen) {
    if (gpu_idle(g)) {
      note(c, "Gen" + std::to_string(gen) +
                  " now because the GPU is idle: GPUs lower the link speed to save "
                  "power and raise it within microseconds when work arrives, so an idle reading says nothing. "
                  "`chokepoint run` samples the link under load (or watch nvidia-smi -q -d PCIE during a job).");
    } else {
      raise(c, Severity::kWarning,
            "The GPU is busy, yet the link runs at Gen" + std::to_string(gen) + " of Gen" + std::to_string(max_gen) +
                ": check the slot, riser and BIOS PCIe settings; a link that retrains low under load "
                "can also mean signal-integrity errors (see the PCIe replay counter in nvidia-smi -q).");
    }
  }
  return c;
}

Assessment check_persistence_mode(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("persistence-mode", "Persistence mode", g);
  c.expected = "enabled";
  if (!g.persistence.valid) return skipped(c, "not readable: " + describe_error(n, g.persistence.error));
  c.observed = *g.persistence ? "enabled" : "disabled";
  if (!*g.persistence) {
    raise(c, Severity::kWarning,
          "Without it the driver tears the GPU state down when the last CUDA process exits and rebuilds it "
          "for the next one (a second or more per start, longer with many GPUs), and settings made with "
          "nvidia-smi can be lost. Run the nvidia-persistenced service, or `sudo nvidia-smi -pm 1`.");
  }
  return c;
}

Assessment check_clocks(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("clock-throttled", "Clocks and throttling", g);
  c.expected = "no thermal, hardware-slowdown or power-brake reasons (idle, and the power cap under load, are normal)";
  std::string obs = "SM " + mhz(g.sm_clock) + "/" + mhz(g.sm_clock_max) + " MHz, memory " + mhz(g.mem_clock) + "/" +
                    mhz(g.mem_clock_max) + " MHz";
  if (g.pstate.valid) obs += ", P" + std::to_string(*g.pstate);
  if (g.temperature_c.valid) obs += ", " + std::to_string(*g.temperature_c) + " C";
  if (g.power_mw.valid) {
    obs += ", " + std::to_string(*g.power_mw / 1000) + " W";
    if (g.power_limit_mw.valid) obs += " of " + std::to_string(*g.power_limit_mw / 1000) + " W limit";
  }
  if (!g.clock_reasons.valid) {
    c.observed = obs;
    c.outcome = Assessment::Outcome::kSkipped;
    c.advice = "Clock event reasons not readable: " + describe_error(n, g.clock_reasons.error) + ".";
    return c;
  }
  const uint64_t r = *g.clock_reasons;
  std::string names;
  for (const auto& name : samples::clock_event_reason_names(r)) names += (names.empty() ? "" : ", ") + name;
  c.observed = obs + "; reasons: " + (names.empty() ? "none" : names);

  constexpr uint64_t kHardware = samples::kReasonHwSlowdown | samples::kReasonHwThermalSlowdown |
                                 samples::kReasonHwPowerBrakeSlowdown;
  if (r & kHardware) {
    raise(c, Severity::kCritical,
          "Hardware slowdown is active: clocks are cut hard to protect the GPU. HW thermal means it is too hot "
          "(fans, airflow, inlet temperature); power brake means the chassis or power supply asked it to slow "
          "down; HW slowdown covers both and power-supply faults. `nvidia-smi -q -d PERFORMANCE` shows the "
          "same flags; look for Xid messages in `dmesg`.");
  }
  if (r & samples::kReasonSwThermalSlowdown) {
    raise(c, Severity::kWarning,
          "The driver lowers clocks to keep the GPU under its temperature target: improve cooling or airflow.");
  }
  if (g.power_limit_mw.valid && g.power_default_limit_mw.valid &&
      *g.power_limit_mw < kPowerLimitLoweredFraction * *g.power_default_limit_mw) {
    raise(c, Severity::kWarning,
          "The power limit is " + std::to_string(*g.power_limit_mw / 1000) + " W, below the board default of " +
              std::to_string(*g.power_default_limit_mw / 1000) +
              " W: clocks drop earlier under load. Restore it with `sudo nvidia-smi -pl " +
              std::to_string(*g.power_default_limit_mw / 1000) + "` unless the cap is intended.");
  }
  if (r & samples::kReasonSwPowerCap) {
    note(c, "Clocks are at the power limit: normal while heavy work runs (the driver trades clock for watts).");
  }
  if (r & samples::kReasonApplicationsClocksSetting) {
    note(c,
         "Clocks are held at the applications clocks setting (`nvidia-smi -q -d CLOCK` shows it; "
         "`sudo nvidia-smi -rac` resets it).");
  }
  if ((r & samples::kReasonGpuIdle) && c.outcome == Assessment::Outcome::kPass && c.advice.empty()) {
    c.advice = "Idle: clocks are low to save power and rise when work arrives.";
  }
  return c;
}

namespace {

// Each of these reads one group of the memory error counters: nullopt when unreadable,
// else what it shows (for `observed`), raising `c` for what needs action.

std::optional<std::string> ecc_mode_part(const GpuFacts& g, Assessment& c) {
  if (!g.ecc_mode.valid) return std::nullopt;
  const bool change_pending = g.ecc_mode->pending != g.ecc_mode->current;
  if (!g.ecc_mode->current) {
    raise(c, Severity::kWarning,
          "ECC is off: bit errors in GPU memory go undetected and silently corrupt results. Datacenter GPUs "
          "ship with it on; `sudo nvidia-smi -e 1` and a reboot turn it back on.");
  }
  if (change_pending) {
    raise(c, Severity::kWarning, "An ECC mode change is pending: it takes effect after a reboot or GPU reset.");
  }
  return std::string("ECC ") + (g.ecc_mode->current ? "on" : "off") +
         (change_pending ? (g.ecc_mode->pending ? " (on after reset)" : " (off after reset)") : "");
}

std::optional<std::string> uncorrectable_part(const GpuFacts& g, Assessment& c) {
  if (!g.ecc_volatile_uncorrected.valid && !g.ecc_aggregate_uncorrected.valid) return std::nullopt;
  auto num = [](const nvml::Value<uint64_t>& v) { return v.valid ? std::to_string(*v) : std::string("?"); };
  if (g.ecc_volatile_uncorrected.valid && *g.ecc_volatile_uncorrected > 0) {
    raise(c, Severity::kCritical,
          "Uncorrectable memory errors since the driver loaded: results computed since may be wrong. Reset the "
          "GPU (`sudo nvidia-smi -r`) or reboot; if errors return, drain the GPU and have it checked.");
  } else if (g.ecc_aggregate_uncorrected.valid && *g.ecc_aggregate_uncorrected > 0) {
    raise(c, Severity::kWarning, "This board has had uncorrectable memory errors in its lifetime: watch for new ones.");
  }
  return "uncorrectable errors " + num(g.ecc_volatile_uncorrected) + " since driver load, " +
         num(g.ecc_aggregate_uncorrected) + " lifetime";
}

std::optional<std::string> remapped_rows_part(const GpuFacts& g, Assessment& c) {
  if (!g.remapped.valid) return std::nullopt;
  const auto& r = *g.remapped;
  // NVIDIA "GPU Memory Error Management": a set row-remapping failure flag is the RMA criterion.
  if (r.failure_occurred) {
    raise(c, Severity::kCritical,
          "Row remapping failed: this GPU has run out of spare memory rows, which is NVIDIA's replacement "
          "(RMA) criterion. Drain it and run the NVIDIA field diagnostic.");
  }
  if (r.pending) {
    raise(c, Severity::kWarning,
          "Row remappings are pending: until a GPU reset (`sudo nvidia-smi -r` or reboot) the bad rows stay in use.");
  }
  return "remapped rows " + std::to_string(r.correctable) + " correctable, " + std::to_string(r.uncorrectable) +
         " uncorrectable" + (r.pending ? ", pending" : "") + (r.failure_occurred ? ", FAILED" : "");
}

std::optional<std::string> retired_pages_part(const GpuFacts& g, Assessment& c) {
  if (!g.retired_sbe.valid && !g.retired_dbe.valid) return std::nullopt;
  const unsigned total = g.retired_sbe.value_or(0) + g.retired_dbe.value_or(0);
  const bool pending = g.retired_pending.valid && *g.retired_pending;
  if (pending) {
    raise(c, Severity::kWarning, "Pages are pending retirement: reboot or reload the driver to retire them.");
  }
  if (total >= kRetiredPagesLimit) {
    raise(c, Severity::kWarning,
          std::to_string(total) + " pages retired of the 64 a board can hold: plan to replace this GPU.");
  }
  return "retired pages " + std::to_string(total) + (pending ? " (retirement pending)" : "");
}

}  // namespace

Assessment check_memory_errors(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("memory-errors", "ECC and memory errors", g);
  c.expected = "ECC on; no uncorrectable errors; no pending or failed row remapping / page retirement";
  std::vector<std::string> parts;
  for (auto* part : {&ecc_mode_part, &uncorrectable_part, &remapped_rows_part, &retired_pages_part}) {
    if (std::optional<std::string> p = part(g, c)) parts.push_back(std::move(*p));
  }
  if (parts.empty())
    return skipped(c, "ECC and memory error counters not readable: " + describe_error(n, g.ecc_mode.error));
  for (const auto& p : parts) c.observed += (c.observed.empty() ? "" : "; ") + p;
  return c;
}

Assessment check_other_processes(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("gpu-shared", "Memory held by other processes", g);
  c.expected = "no other process on the GPU";
  std::string mem;
  if (g.memory.valid) mem = format_bytes(g.memory->used) + " of " + format_bytes(g.memory->total) + " used";
  if (g.processes.valid && !g.processes->empty()) {
    uint64_t held = 0;
    std::string list;
    for (const auto& p : *g.processes) {
      held += p.used_bytes.value_or(0);
      if (!list.empty()) list += ", ";
      list += "pid ";
      list += std::to_string(p.pid);
      list += ' ';
      list += p.command.empty() ? std::string("(not visible here)") : p.command;
      if (p.used_bytes) {
        list += ' ';
        list += format_bytes(*p.used_bytes);
      }
    }
    c.observed = std::to_string(g.processes->size()) + " process" + (g.processes->size() > 1 ? "es" : "") + " hold " +
                 format_bytes(held) + ": " + list + (mem.empty() ? "" : "; " + mem);
    raise(c, Severity::kWarning,
          "A job started now shares this GPU's memory and SMs with them: less memory (OOM sooner) and slower "
          "kernels. Stop them, or pick a free GPU with CUDA_VISIBLE_DEVICES.");
    return c;
  }
  if (!g.memory.valid) {
    if (!g.processes.valid)
      return skipped(c, "processes and memory not readable: " + describe_error(n, g.processes.error));
    c.observed = "no compute process";
    return c;
  }
  const uint64_t threshold = std::max<uint64_t>(
      kHiddenMemoryMinBytes, static_cast<uint64_t>(kHiddenMemoryMinFraction * static_cast<double>(g.memory->total)));
  c.observed = (g.processes.valid ? "no compute process; " : "process list not readable; ") + mem;
  if (g.memory->used > threshold) {
    raise(c, Severity::kWarning,
          format_bytes(g.memory->used) +
              " is in use but no process is listed: processes in another container or "
              "PID namespace hold it (NVML names only processes it can see from here). A job started now gets "
              "that much less memory.");
  }
  return c;
}

Assessment check_numa_affinity(const GpuFacts& g, const HostFacts& h) {
  Assessment c = make("numa-mismatch", "NUMA: GPU vs this process's CPUs", g);
  c.expected = "this process may run only on CPUs of the GPU's NUMA node";
  if (!h.allowed_cpus) return skipped(c, "the CPU affinity of this process is not readable");
  const std::string allowed = format_cpu_list(*h.allowed_cpus);
  if (h.numa_nodes_online && h.numa_nodes_online->size() <= 1) {
    c.observed = "one NUMA node: every CPU is equally close to the GPU (this process may use CPUs " + allowed + ")";
    return c;
  }
  std::vector<unsigned> local;
  if (g.sysfs.local_cpus && !g.sysfs.local_cpus->empty()) {
    local = *g.sysfs.local_cpus;
  } else if (g.nvml_cpu_affinity.valid && !g.nvml_cpu_affinity->empty()) {
    local = *g.nvml_cpu_affinity;
  } else {
    return skipped(c, "the GPU's local CPUs are not reported (no sysfs local_cpulist, no NVML CPU affinity)");
  }
  const int node = g.sysfs.numa_node.value_or(-1);
  if (node < 0 && local.size() >= h.allowed_cpus->size() && intersect_cpus(local, *h.allowed_cpus) == *h.allowed_cpus) {
    return skipped(c, "the firmware does not say which NUMA node the GPU is attached to (numa_node -1)");
  }
  const std::string node_text = node >= 0 ? "node " + std::to_string(node) : "its node";
  const std::string bind = node >= 0
                               ? "numactl --cpunodebind=" + std::to_string(node) + " --membind=" + std::to_string(node)
                               : "taskset -c " + format_cpu_list(local);
  const auto both = intersect_cpus(*h.allowed_cpus, local);
  c.observed = "GPU on " + node_text + " (CPUs " + format_cpu_list(local) + "); this process may use CPUs " + allowed;
  if (both.empty()) {
    raise(c, Severity::kWarning,
          "None of the CPUs this process may use is on the GPU's node: every copy and launch crosses the socket "
          "interconnect (lower pinned-copy bandwidth, higher launch latency). Bind the job to the GPU's node: `" +
              bind + " -- python train.py`, one binding per rank.");
  } else if (both.size() < h.allowed_cpus->size()) {
    note(c, std::to_string(both.size()) + " of the " + std::to_string(h.allowed_cpus->size()) +
                " CPUs this process may use are on the GPU's node. A shell usually may use all CPUs; for a GPU job, "
                "bind each rank to its GPU's node (`" +
                bind + "`).");
  }
  return c;
}

Assessment check_gpm(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("gpm-metrics", "GPU performance metrics (GPM)", g);
  c.expected = "supported (Hopper and newer)";
  if (!g.gpm_supported.valid) return skipped(c, "GPM not available: " + describe_error(n, g.gpm_supported.error));
  if (!*g.gpm_supported) {
    return skipped(c,
                   "this GPU does not offer GPM (it needs Hopper or newer): SM, tensor and DRAM activity need "
                   "DCGM profiling here; utilization.gpu only says whether any kernel ran");
  }
  c.observed = "supported: SM, tensor-core and DRAM activity can be sampled (chokepoint run / watch)";
  return c;
}

Assessment check_gpu_access(const GpuFacts& g, const NvmlFacts& n) {
  Assessment c = make("gpu-access", "GPU access", g);
  c.observed = "NVML cannot open this GPU: " + describe_error(n, g.handle_error);
  c.expected = "the GPU answers";
  const bool lost = g.handle_error == 15;                                    // NVML_ERROR_GPU_IS_LOST
  raise(c, g.handle_error == 4 ? Severity::kWarning : Severity::kCritical);  // 4: NVML_ERROR_NO_PERMISSION
  c.advice = lost ? "The GPU has fallen off the bus: check `dmesg` for Xid 79, then reset or reboot the node."
                  : "Check `nvidia-smi`; permissions on /dev/nvidia* decide what a non-root user may read.";
  return c;
}

}  // namespace chokepoint::rules::checks
