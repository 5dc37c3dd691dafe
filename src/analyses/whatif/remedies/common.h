// Figures and helpers the remedies share. Each constant says where it comes from.
#pragma once

#include <algorithm>
#include <string>

#include "analyses/whatif/whatif.h"

namespace chokepoint::analyses::whatif::remedy {

// A CUDA Graph replays a kernel node in ~0.5 us on the H200 (bench's graph-node latency,
// docs/VALIDATION.md; docs/FORMATS.md "H200 figures").
inline constexpr TimeNs kGraphNodeNs = 500;
// cudaGraphLaunch on the host: about one kernel launch (bench: 3.7-5 us on the H200).
inline constexpr TimeNs kGraphLaunchNs = 5'000;
// The shortest a kernel runs however little it does (a launch-bound loop of 256-element
// adds ran 1.0 us per kernel on the H200): the floor of any rescaled kernel.
inline constexpr TimeNs kKernelFloorNs = 1'500;
// Below this, a kernel's time is mostly fixed latency, not work that grows or shrinks
// with its data (4 launch latencies of ~1 us; kernels.cc's small-kernel line is 10 us).
inline constexpr TimeNs kLatencyBoundNs = 3'000;
// Share of the HBM ceiling a well-formed memory-bound kernel reaches (the bench copy
// kernel: 1956 of 2400 GB/s bytes-once on the H200, ~0.8).
inline constexpr double kHbmEfficiency = 0.8;

inline TimeNs ns(double v) { return static_cast<TimeNs>(v); }

// Time to move `bytes` through HBM at the achievable rate; 0 when unknown.
inline TimeNs hbm_time(const Context& c, double bytes) {
  if (bytes <= 0 || !c.ceilings.hbm_gbps) return 0;
  return ns(bytes / (*c.ceilings.hbm_gbps * kHbmEfficiency));  // GB/s = bytes per ns
}

// Median host cost (gap + call) of one launch in the plain replay: what one more
// kernel launched from Python costs this program.
TimeNs median_launch_cost(const Context& c);

// pinned-copies' change, shared with dataloader-workers (pin_memory=True): pageable
// copies at the pinned rate, host-to-device ones no longer holding the host.
struct PinnedStats {
  int64_t copies = 0;
  double bytes = 0;
  TimeNs before = 0, after = 0;
};
PinnedStats apply_pinned_copies(const Context& c, Plan& p);

// "1.23 ms" per step from a total over the graph's steps.
std::string per_step_ms(const Context& c, TimeNs total);
// "161" per step from a count over the graph's steps (a count beside per_step_ms figures
// is per step too: "18719 kernels take 1.39 ms per step" read as if one step ran them all).
std::string per_step_count(const Context& c, int64_t total);

}  // namespace chokepoint::analyses::whatif::remedy
