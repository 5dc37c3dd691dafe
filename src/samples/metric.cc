#include "samples/metric.h"

#include <array>
#include <cmath>

namespace chokepoint::samples {
namespace {

using M = MetricId;
using E = EntityKind;

constexpr std::array<MetricInfo, kMetricCount> kCatalogue = {{
    {M::kGpuUtilization, "gpu.utilization", "%", E::kGpu, "share of time any kernel or copy ran (nvidia-smi GPU-Util)"},
    {M::kGpuMemoryUtilization, "gpu.memory_utilization", "%", E::kGpu, "share of time device memory was accessed"},
    {M::kGpuGrEngineActive, "gpu.gr_engine_active", "%", E::kGpu, "graphics/compute engine active (GPM)"},
    {M::kGpuSmActive, "gpu.sm_active", "%", E::kGpu, "SM activity averaged over all SMs (GPM)"},
    {M::kGpuSmOccupancy, "gpu.sm_occupancy", "%", E::kGpu, "resident warps / max warps (GPM)"},
    {M::kGpuTensorActive, "gpu.tensor_active", "%", E::kGpu, "any tensor pipe active (GPM)"},
    {M::kGpuDramActive, "gpu.dram_active", "%", E::kGpu, "DRAM bandwidth utilization (GPM)"},
    {M::kGpuPcieRxBytesPerS, "gpu.pcie_rx_bytes_per_s", "B/s", E::kGpu, "PCIe host -> GPU"},
    {M::kGpuPcieTxBytesPerS, "gpu.pcie_tx_bytes_per_s", "B/s", E::kGpu, "PCIe GPU -> host"},
    {M::kGpuPcieLinkGen, "gpu.pcie_link_gen", "gen", E::kGpu, "current PCIe generation (drops at idle)"},
    {M::kGpuPcieLinkGenMax, "gpu.pcie_link_gen_max", "gen", E::kGpu, "best generation of GPU and slot"},
    {M::kGpuPcieLinkWidth, "gpu.pcie_link_width", "lanes", E::kGpu, "current PCIe width"},
    {M::kGpuPcieLinkWidthMax, "gpu.pcie_link_width_max", "lanes", E::kGpu, "maximum PCIe width"},
    {M::kGpuMemoryUsedBytes, "gpu.memory_used_bytes", "B", E::kGpu, "device memory in use"},
    {M::kGpuMemoryTotalBytes, "gpu.memory_total_bytes", "B", E::kGpu, "device memory size"},
    {M::kGpuPowerW, "gpu.power_w", "W", E::kGpu, "board power draw"},
    {M::kGpuPowerLimitW, "gpu.power_limit_w", "W", E::kGpu, "enforced power limit"},
    {M::kGpuSmClockMhz, "gpu.sm_clock_mhz", "MHz", E::kGpu, "SM clock"},
    {M::kGpuMemClockMhz, "gpu.mem_clock_mhz", "MHz", E::kGpu, "memory clock"},
    {M::kGpuClockEventReasons, "gpu.clock_event_reasons", "bitmask", E::kGpu, "why clocks are held down (NVML bits)"},
    {M::kGpuTemperatureC, "gpu.temperature_c", "C", E::kGpu, "GPU core temperature"},
    {M::kHostCpuUserPct, "host.cpu_user_pct", "%", E::kHost, "user + nice time, share of all CPUs"},
    {M::kHostCpuSystemPct, "host.cpu_system_pct", "%", E::kHost, "system + irq + softirq time, share of all CPUs"},
    {M::kHostCpuIowaitPct, "host.cpu_iowait_pct", "%", E::kHost, "idle with I/O outstanding, share of all CPUs"},
    {M::kHostCpuStealPct, "host.cpu_steal_pct", "%", E::kHost, "time the hypervisor ran something else"},
    {M::kHostCpuIdlePct, "host.cpu_idle_pct", "%", E::kHost, "idle time, share of all CPUs"},
    {M::kHostProcsRunning, "host.procs_running", "tasks", E::kHost, "runnable tasks (run queue)"},
    {M::kHostProcsBlocked, "host.procs_blocked", "tasks", E::kHost, "tasks in uninterruptible sleep"},
    {M::kHostCtxSwitchesPerS, "host.ctx_switches_per_s", "1/s", E::kHost, "context switches, all CPUs"},
    {M::kHostSwapInPagesPerS, "host.swap_in_pages_per_s", "pages/s", E::kHost, "pages swapped in"},
    {M::kHostSwapOutPagesPerS, "host.swap_out_pages_per_s", "pages/s", E::kHost, "pages swapped out"},
    {M::kHostMajorFaultsPerS, "host.major_faults_per_s", "1/s", E::kHost, "page faults that needed I/O"},
    {M::kHostPsiCpuSomeAvg10, "host.psi_cpu_some_avg10", "%", E::kHost, "PSI: some task waited for CPU (10 s avg)"},
    {M::kHostPsiCpuFullAvg10, "host.psi_cpu_full_avg10", "%", E::kHost, "PSI: all tasks waited for CPU (10 s avg)"},
    {M::kHostPsiMemorySomeAvg10, "host.psi_memory_some_avg10", "%", E::kHost, "PSI: some task stalled on memory"},
    {M::kHostPsiMemoryFullAvg10, "host.psi_memory_full_avg10", "%", E::kHost, "PSI: all tasks stalled on memory"},
    {M::kHostPsiIoSomeAvg10, "host.psi_io_some_avg10", "%", E::kHost, "PSI: some task stalled on I/O"},
    {M::kHostPsiIoFullAvg10, "host.psi_io_full_avg10", "%", E::kHost, "PSI: all tasks stalled on I/O"},
    {M::kHostPsiCpuSomePct, "host.psi_cpu_some_pct", "%", E::kHost,
     "PSI: share of the interval some task waited for CPU"},
    {M::kHostPsiMemorySomePct, "host.psi_memory_some_pct", "%", E::kHost,
     "PSI: share of the interval some task stalled on memory"},
    {M::kHostPsiMemoryFullPct, "host.psi_memory_full_pct", "%", E::kHost,
     "PSI: share of the interval all tasks stalled on memory"},
    {M::kHostPsiIoSomePct, "host.psi_io_some_pct", "%", E::kHost,
     "PSI: share of the interval some task stalled on I/O"},
    {M::kHostDiskReadBytesPerS, "host.disk_read_bytes_per_s", "B/s", E::kHost, "reads of whole disks (no partitions)"},
    {M::kHostDiskWriteBytesPerS, "host.disk_write_bytes_per_s", "B/s", E::kHost, "writes of whole disks"},
    {M::kHostMemAvailableBytes, "host.mem_available_bytes", "B", E::kHost, "MemAvailable of /proc/meminfo"},
    {M::kProcCpuPct, "proc.cpu_pct", "%", E::kProcess, "user + system CPU, 100 = one core"},
    {M::kProcThreads, "proc.threads", "threads", E::kProcess, "threads of the process"},
    {M::kProcThreadsRunning, "proc.threads_running", "threads", E::kProcess, "threads in state R at their last visit"},
    {M::kProcCtxVoluntaryPerS, "proc.ctx_voluntary_per_s", "1/s", E::kProcess,
     "voluntary switches, summed over threads"},
    {M::kProcCtxInvoluntaryPerS, "proc.ctx_involuntary_per_s", "1/s", E::kProcess, "preemptions, summed over threads"},
    {M::kProcRunqWaitNsPerS, "proc.runq_wait_ns_per_s", "ns/s", E::kProcess, "run-queue wait, summed over threads"},
    {M::kProcReadBytesPerS, "proc.read_bytes_per_s", "B/s", E::kProcess, "bytes read from storage (/proc/PID/io)"},
    {M::kProcWriteBytesPerS, "proc.write_bytes_per_s", "B/s", E::kProcess, "bytes written to storage"},
    {M::kProcRssBytes, "proc.rss_bytes", "B", E::kProcess, "resident set size"},
    {M::kThreadCpuPct, "thread.cpu_pct", "%", E::kThread, "user + system CPU, 100 = one core"},
    {M::kThreadState, "thread.state", "ascii", E::kThread, "state letter of /proc stat as its ASCII code"},
    {M::kThreadCtxVoluntaryPerS, "thread.ctx_voluntary_per_s", "1/s", E::kThread, "voluntary context switches"},
    {M::kThreadCtxInvoluntaryPerS, "thread.ctx_involuntary_per_s", "1/s", E::kThread, "preemptions"},
    {M::kThreadRunqWaitNsPerS, "thread.runq_wait_ns_per_s", "ns/s", E::kThread, "run-queue wait"},
}};

constexpr bool catalogue_in_id_order() {
  for (size_t i = 0; i < kCatalogue.size(); ++i) {
    if (static_cast<size_t>(kCatalogue[i].id) != i) return false;
  }
  return true;
}
static_assert(catalogue_in_id_order(), "kCatalogue must list metrics in MetricId order");

}  // namespace

std::span<const MetricInfo> metric_catalogue() { return kCatalogue; }

const MetricInfo& metric_info(MetricId id) { return kCatalogue[static_cast<size_t>(id)]; }

std::optional<MetricId> find_metric(std::string_view name) {
  for (const MetricInfo& m : kCatalogue) {
    if (m.name == name) return m.id;
  }
  return std::nullopt;
}

bool plausible_value(MetricId id, double v) {
  if (!std::isfinite(v)) return false;
  const MetricInfo& m = metric_info(id);
  if (id == MetricId::kGpuTemperatureC) return v > -100 && v < 1000;
  if (v < 0) return false;
  // Per-process and per-thread CPU: 100 a core, of at most 100,000 cores.
  if (id == MetricId::kProcCpuPct || id == MetricId::kThreadCpuPct) return v <= 1e7;
  // Shares of a whole (GPU engines, all CPUs, PSI): 110 leaves room for rounding of
  // counters read a few microseconds apart.
  if (m.unit == "%") return v <= 110;
  if (m.unit == "W") return v <= 1e6;
  if (m.unit == "MHz") return v <= 1e6;
  return v <= 1e18;  // bytes, rates, counts: an exabyte, 10^18 a second
}

std::string_view entity_kind_name(EntityKind kind) {
  switch (kind) {
    case EntityKind::kHost: return "host";
    case EntityKind::kGpu: return "gpu";
    case EntityKind::kProcess: return "pid";
    case EntityKind::kThread: return "tid";
  }
  return "?";
}

}  // namespace chokepoint::samples
