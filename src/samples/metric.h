// The metric catalogue of a recording: every series chokepoint samples live has one id
// here, with a stable name (the name is what the recording file stores, so ids may be
// renumbered between versions but names never change meaning), a unit and the kind of
// entity it describes. Rules and reporters look metrics up by id; readers by name.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace chokepoint::samples {

enum class EntityKind : uint8_t { kHost, kGpu, kProcess, kThread };

enum class MetricId : uint16_t {
  // GPU (NVML classic every tick; the GPM ones from a pair of snapshots >= 100 ms apart).
  kGpuUtilization,        // nvidia-smi "GPU-Util": any kernel or copy running, not SM activity
  kGpuMemoryUtilization,  // share of time device memory was read or written
  kGpuGrEngineActive,     // GPM 1
  kGpuSmActive,           // GPM 2
  kGpuSmOccupancy,        // GPM 3
  kGpuTensorActive,       // GPM 5
  kGpuDramActive,         // GPM 10
  kGpuPcieRxBytesPerS,    // host -> GPU
  kGpuPcieTxBytesPerS,    // GPU -> host
  kGpuPcieLinkGen,
  kGpuPcieLinkGenMax,
  kGpuPcieLinkWidth,
  kGpuPcieLinkWidthMax,
  kGpuMemoryUsedBytes,
  kGpuMemoryTotalBytes,
  kGpuPowerW,
  kGpuPowerLimitW,
  kGpuSmClockMhz,
  kGpuMemClockMhz,
  kGpuClockEventReasons,  // bitmask, see samples/clock_reasons.h
  kGpuTemperatureC,
  // Host (/proc).
  kHostCpuUserPct,    // user + nice, share of all CPUs
  kHostCpuSystemPct,  // system + irq + softirq
  kHostCpuIowaitPct,
  kHostCpuStealPct,
  kHostCpuIdlePct,
  kHostProcsRunning,  // run queue length (includes the running ones)
  kHostProcsBlocked,  // in uninterruptible sleep, mostly I/O
  kHostCtxSwitchesPerS,
  kHostSwapInPagesPerS,
  kHostSwapOutPagesPerS,
  kHostMajorFaultsPerS,
  kHostPsiCpuSomeAvg10,
  kHostPsiCpuFullAvg10,
  kHostPsiMemorySomeAvg10,
  kHostPsiMemoryFullAvg10,
  kHostPsiIoSomeAvg10,
  kHostPsiIoFullAvg10,
  kHostPsiCpuSomePct,  // share of each interval (from PSI totals): no 10 s smoothing
  kHostPsiMemorySomePct,
  kHostPsiMemoryFullPct,
  kHostPsiIoSomePct,
  kHostDiskReadBytesPerS,
  kHostDiskWriteBytesPerS,
  kHostMemAvailableBytes,
  // Process (sums over its threads where the kernel keeps counters per thread).
  kProcCpuPct,  // 100 = one core
  kProcThreads,
  kProcThreadsRunning,
  kProcCtxVoluntaryPerS,
  kProcCtxInvoluntaryPerS,
  kProcRunqWaitNsPerS,  // time runnable but not running, summed over threads
  kProcReadBytesPerS,
  kProcWriteBytesPerS,
  kProcRssBytes,
  // Thread.
  kThreadCpuPct,
  kThreadState,  // the /proc state letter as its ASCII code ('R' = 82, 'S' = 83, 'D' = 68)
  kThreadCtxVoluntaryPerS,
  kThreadCtxInvoluntaryPerS,
  kThreadRunqWaitNsPerS,
  kCount
};

inline constexpr size_t kMetricCount = static_cast<size_t>(MetricId::kCount);

struct MetricInfo {
  MetricId id;
  std::string_view name;  // stored in recordings: never reuse a name for another meaning
  std::string_view unit;
  EntityKind entity;
  std::string_view description;
};

// Indexed by MetricId.
std::span<const MetricInfo> metric_catalogue();
const MetricInfo& metric_info(MetricId id);
std::optional<MetricId> find_metric(std::string_view name);

std::string_view entity_kind_name(EntityKind kind);

// Whether `v` can be a value of metric `id` at all: finite, not negative (a temperature
// may be), a share of the machine at most 100% (with rounding room; a process's CPU is
// 100 a core), and below limits no real machine reaches. A recording is written by
// chokepoint, but read from wherever the user has it: a CRITICAL finding built from
// -8,388,608 TiB of GPU memory is what believing a damaged one looks like (issue 47).
bool plausible_value(MetricId id, double v);

}  // namespace chokepoint::samples
