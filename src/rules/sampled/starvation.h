// Why a starved GPU waits, tick by tick, from live samples: shared by the sample
// evaluators of input-pipeline-stall, launch-overhead and pageable-memcpy.
//
// A tick is starved when the GPU is busy less than half of it (nvidia-smi utilization,
// else GPM SM activity) while a DataLoader worker or the main process is CPU-saturated.
// What the GPU does meanwhile tells the causes apart (measured on the H200 with the
// analyze fixtures' workloads, docs/VALIDATION.md):
//   transfer  PCIe carries >= 2 GB/s: the CPU-bound main thread is staging copies
//             (pageable memory; pageable_copy moved 7.2 GB/s, input_bound 0.14 GB/s);
//   launch    kernels run most of the busy time but fill almost no SM (utilization >= 3x
//             SM activity, SM activity < 10%): a stream of tiny kernels paced by the CPU
//             (launch_bound: 19% utilization, 0.3% SM activity);
//   input     DataLoader workers are saturated, or the main process is and reads its data
//             from storage meanwhile (>= 10 MB/s): batches are being made;
//   host      the main process alone is saturated with no sign of loading: its own Python,
//             framework overhead or per-step bookkeeping (issue 10: a loop calling .item()
//             every step, or Python threads sharing its GIL, is not an input stall).
#pragma once

#include <cstdint>

#include "rules/rule.h"

namespace chokepoint::rules::sampled {

enum class StarveCause { kInput = 0, kLaunch = 1, kTransfer = 2, kHost = 3 };
inline constexpr int kNumStarveCauses = 4;

struct Starvation {
  int64_t measured = 0;  // active ticks with a GPU activity reading
  int64_t fed = 0;       // ticks the GPU was busy >= half the time
  double fed_busy = 0;   // sum of their busy %
  struct Cause {
    int64_t ticks = 0;
    int64_t by_workers = 0;       // of them, with a saturated DataLoader worker
    double busy = 0;              // sum of busy %
    double pcie_bytes_per_s = 0;  // sum of RX + TX
    double sm = 0;                // sum of SM activity % (where GPM read)
    int64_t sm_ticks = 0;
  } causes[kNumStarveCauses];

  const Cause& of(StarveCause c) const { return causes[static_cast<int>(c)]; }
  double share(StarveCause c) const {
    return measured > 0 ? static_cast<double>(of(c).ticks) / static_cast<double>(measured) : 0.0;
  }
  // What-if: the ticks starved for `c` run their GPU work at the fed rate, the other
  // ticks stay; nullopt without enough fed ticks to know that rate.
  std::optional<double> speedup_without(StarveCause c) const;
};

Starvation starvation(const SampleEvidence& c, const analyses::sampled::GpuLive& g);

// What-if for CPU-saturated DataLoader workers, by throughput (issue 10: workers that
// deliver in bursts keep the median step short while the mean is long, so starved ticks
// alone undercount the waits). Over the loading span (active ticks in which at least half
// the workers are saturated) the GPU did `mean_busy` % of work per tick; fed, it runs at
// `fed_busy` %: the upper quartile of the span's fed readings (a tick fed for part of its
// period reads between the two, so their mean undercounts the fed rate). The workers'
// output grows with their number, up to the CPUs less two (the main process and its
// pin-memory thread): gain = min(fed_busy / mean_busy, max_workers / workers).
struct LoaderGain {
  double speedup = 1.0;
  double mean_busy = 0, fed_busy = 0;  // %
  int64_t ticks = 0, fed = 0;          // of the loading span, of them fed
  int workers = 0, max_workers = 0;    // seen, and the most the CPUs allow (0 unknown)
  bool capped = false;                 // the CPUs, not the GPU, bound the gain
};
// nullopt without workers, fewer than 3 fed ticks in the span or no idle share to win.
std::optional<LoaderGain> loader_gain(const SampleEvidence& c, const analyses::sampled::GpuLive& g, int cpus);

// A GPU busy less than this share of a tick is starved (the TensorBoard plugin's "GPU
// utilization below 50%" test, also diagnose()'s idle-majority line).
inline constexpr double kStarvedBelowPct = 50.0;
// A process at 90% of one core has no slack left.
inline constexpr double kSaturatedCpuPct = 90.0;
// A fifth of the active window starved for one cause is worth a finding (a trace's 5%
// needs exact attribution; sampled ticks at 100 ms do not give it).
inline constexpr double kMinStarvedShare = 0.20;

}  // namespace chokepoint::rules::sampled
