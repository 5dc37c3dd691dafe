// One rank of a distributed job reduced to what the cross-rank step needs (cross_rank.h):
// its steps, its step breakdown per step, and its collectives in issue order. A rank's
// timeline is dropped once it is summarized, so that many ranks never sit in memory at
// once (docs/DISTRIBUTED.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/analysis.h"
#include "timeline/model.h"

namespace chokepoint::analyses::distributed {

using timeline::TimeNs;

enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kBarrier,
  kOther,
};
const char* collective_name(CollectiveKind k);  // "all_reduce", ...

// The kind of collective a GPU kernel runs (ncclDevKernel_AllReduce_Sum_f32_RING_LL,
// ncclKernel_AllGather_...), or nullopt when the name is no NCCL collective kernel.
std::optional<CollectiveKind> collective_of_kernel(std::string_view kernel_name);
// The kind of a host-side collective op of torch.distributed (the record_function names
// ProcessGroup gives its work: "gloo:all_reduce", "nccl:all_reduce"), or nullopt.
std::optional<CollectiveKind> collective_of_op(std::string_view op_name);
// NCCL's bus-bandwidth factor for a collective over n ranks (nccl-tests PERFORMANCE.md):
// all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; others 1.
double bus_factor(CollectiveKind k, int n);

struct Collective {
  CollectiveKind kind = CollectiveKind::kOther;
  bool on_gpu = true;   // an NCCL kernel; false: a host-side op (gloo)
  int64_t bytes = 0;    // message size (NCCL kernels' "In msg nelems" x dtype), 0 unknown
  int64_t step = -1;    // step number of the window it started in, -1 none
  int32_t in_step = 0;  // its index among the collectives of that step
  TimeNs start = 0, end = 0;
  TimeNs exposed = 0;  // part of [start, end) in which no compute kernel ran on the rank's GPU
};

struct RankSummary {
  int32_t rank = -1, world_size = -1;
  std::string backend;  // distributedInfo.backend
  std::string path;     // the rank's input
  int32_t domain = 0;   // clock domain: one per node's directory (cross_rank.h aligns them)
  std::string device;   // GPU name
  int nvlink_gen = -1;  // of that GPU, -1 unknown
  int64_t events = 0;
  // Steps (ProfilerStep#N) with their windows.
  std::vector<int64_t> step_numbers;
  std::vector<TimeNs> step_start, step_end;
  double step_ms = 0;  // mean
  double step_p50_ms = 0;
  // Per step, ms: GPU busy by kernel class and idle by cause (analyses/breakdown.h).
  std::array<double, kNumKernelClasses> busy_ms{};
  std::array<double, kNumIdleCauses> idle_ms{};
  double compute_ms = 0;                // GPU busy outside communication kernels and copies
  double comm_ms = 0;                   // in collectives (their union), per step
  std::string bound;                    // its own verdict's category, set by the pipeline
  std::optional<double> sm_clock_mhz;   // mean SM clock of its GPU when samples know it
  std::vector<Collective> collectives;  // by start
};

// The summary of one rank's timeline and its analysis (the rank and backend come from
// the timeline's first source with a rank).
RankSummary summarize_rank(const timeline::Timeline& tl, const Analysis& a);

// Shifts every time of `s` by `delta` ns.
void shift_times(RankSummary& s, TimeNs delta);

}  // namespace chokepoint::analyses::distributed
