// Where each step's time goes on the GPU: busy (by kernel class) and idle (by cause).
//
// Every idle gap on a device is attributed from what the CPU thread that launched the NEXT
// GPU op was doing between the moment the GPU ran dry and the moment that op was launched
// (HTA calls all of these "host_wait"; telling them apart is the point):
//   input          the thread was inside the DataLoader's __next__
//   sync           the thread had been blocked in a synchronizing call (cudaStreamSynchronize,
//                  .item(), cudaMemcpy D2H, ...) when the GPU ran dry: the pipeline was
//                  drained, so all host time until the next launch is the sync's cost
//   allocator      the thread was in cudaMalloc/cudaFree (which also synchronizes)
//   launch_overhead the thread was dispatching ATen ops / calling CUDA launch APIs, and
//                  the launch-to-start latency of the next op
//   host_work      the thread was outside any op: Python, preprocessing, logging
//   gpu_wait       the next op was already queued; it waited for a device-side dependency
//   nothing_queued no GPU work followed
//   unknown        the next op's launch is not in the trace
// Then, per step, a what-if correction: when the host's own work (its CPU span minus time
// blocked in syncs) is longer than the GPU's, removing the syncs would not hide it, so
// that much of "sync" is relabelled "host_work".
#pragma once

#include <array>
#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"

namespace chokepoint::analyses {

enum class IdleCause : uint8_t {
  kInput,
  kSync,
  kAllocator,
  kLaunchOverhead,
  kHostWork,
  kGpuWait,
  kNothingQueued,
  kUnknown,
};
inline constexpr int kNumIdleCauses = 8;
const char* idle_cause_name(IdleCause c);

// Time of one step window, averaged over the devices of the step's process that ran
// anything. All values in ns; idle sums to duration - busy, busy_by_class sums to busy.
struct StepBreakdown {
  TimeNs duration = 0;
  TimeNs busy = 0;
  std::array<TimeNs, kNumIdleCauses> idle{};
  std::array<TimeNs, kNumKernelClasses> busy_by_class{};
  TimeNs transfer_busy = 0;    // part of busy_by_class[kCopy] moving host<->device bytes
  TimeNs host_critical = 0;    // step thread's CPU span minus time blocked in syncs/cudaFree
  TimeNs sync_relabelled = 0;  // moved from idle[kSync] to idle[kHostWork]
  int64_t gpu_ops = 0;
  int64_t gaps = 0;

  TimeNs idle_total() const;
  TimeNs idle_of(IdleCause c) const { return idle[static_cast<int>(c)]; }
  TimeNs busy_of(KernelClass c) const { return busy_by_class[static_cast<int>(c)]; }
};

struct Breakdown {
  std::vector<StepBreakdown> steps;  // one per StepWindows::steps entry
  StepBreakdown total;               // sums over steps
};

Breakdown compute_breakdown(const timeline::Timeline& tl, const TimelineIndex& ix, const StepWindows& windows);

}  // namespace chokepoint::analyses
