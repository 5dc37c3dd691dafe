// Host-side CUDA API statistics over the step windows: launches (API time, launch-to-start
// delay, short kernels), synchronizations (count, blocked time, the ATen op that caused
// them), and allocator calls in the steady state (every step but the first).
#pragma once

#include <string>
#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"

namespace chokepoint::analyses {

struct SyncSite {
  std::string api;  // "cudaStreamSynchronize"
  std::string op;   // ATen op that made the call ("aten::_local_scalar_dense"), or ""
  int64_t count = 0;
  TimeNs blocked_ns = 0;
};

struct ApiCallStats {
  int64_t launches = 0;  // kernel launch API calls (runtime and driver)
  int64_t graph_launches = 0;
  TimeNs launch_api_ns = 0;        // time inside them
  double launch_delay_p50_us = 0;  // GPU start - API call end
  double launch_delay_p95_us = 0;
  int64_t kernels = 0;
  int64_t short_kernels = 0;  // GPU duration < kShortKernelNs
  double kernel_p50_us = 0;

  int64_t syncs = 0;
  TimeNs sync_blocked_ns = 0;
  std::vector<SyncSite> sync_sites;  // sorted by blocked time, descending

  int64_t steady_windows = 0;  // windows after the first
  int64_t steady_allocs = 0;   // cudaMalloc & co in those windows
  int64_t steady_frees = 0;
  TimeNs steady_allocator_ns = 0;
};

// Kernels shorter than this finish before the next launch API call returns (~5 us per
// launch on the H200, docs/FORMATS.md "H200 figures"), so a stream of them leaves the GPU idle.
inline constexpr TimeNs kShortKernelNs = 10'000;

ApiCallStats compute_api_call_stats(const timeline::Timeline& tl, const TimelineIndex& ix, const StepWindows& w,
                                    const WindowMembership& wm);

}  // namespace chokepoint::analyses
