// The cross-rank step of a distributed job's analysis: the ranks' summaries
// (rank_summary.h) side by side, the straggler (the rank the others wait for in their
// collectives, and why), the communication no compute hides, the skew of arrivals at the
// collectives, and the what-ifs of removing the straggler's extra time and of hiding the
// exposed communication. Clocks of several nodes are aligned first (align_clocks).
//
// Collectives are matched across ranks by (step number, index within the step), or by
// their order when there are no steps: the k-th all-reduce of step 7 on every rank is one
// collective. A rank arrives at it when its collective starts (the NCCL kernel, or the
// host op for gloo); it completes on every rank when the last one arrives and the data
// has moved, so a rank's wait is the last arrival minus its own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyses/distributed/rank_summary.h"
#include "analyses/whatif/whatif.h"

namespace chokepoint::analyses::distributed {

// A rank is the straggler when it arrives last at this share of the matched collectives
// or more (a chance ordering among n ranks would make it last at 1/n of them) ...
inline constexpr double kStragglerLastShare = 0.5;
// ... and the others wait for it at least this share of their step (below it the ranks
// are balanced within the run-to-run noise of a step, docs/DISTRIBUTED.md "Thresholds").
inline constexpr double kStragglerMinWaitShare = 0.05;

// One rank's row of the side-by-side table.
struct RankRow {
  int32_t rank = -1;
  double step_ms = 0;
  double compute_ms = 0, comm_ms = 0;
  double exposed_comm_ms = 0;        // collectives no compute overlapped, per step (waiting excluded)
  double wait_ms = 0;                // waiting for later ranks in collectives with no compute beside it, per step
  double last_share = 0;             // share of the matched collectives it arrived last at
  double input_ms = 0, host_ms = 0;  // GPU idle per step: data loading; host work, launches, syncs
  std::string bound;
  std::optional<double> sm_clock_mhz;
};

// Collectives of one kind and message size.
struct CollectiveGroup {
  CollectiveKind kind = CollectiveKind::kOther;
  int64_t bytes = 0;               // 0 unknown
  double per_step = 0;             // calls per step on a rank
  double ms_per_step = 0;          // in the collective, per step (median rank)
  double exposed_ms_per_step = 0;  // of which no compute overlapped, waiting excluded
  double transfer_ms = 0;          // one call's duration without the waiting (median)
  std::optional<double> bus_gbps;  // bytes x bus factor / transfer time
};

struct Straggler {
  int32_t rank = -1;
  double last_share = 0;
  double extra_ms = 0;  // per step: what the others wait for it (their median wait)
  std::string cause;    // "input", "host", "compute", "clocks", "unknown"
  double cause_ms = 0;  // its excess in that part of the step over the other ranks' median
  std::string detail;   // the excesses in words
};

// How one node's clock was aligned to the reference node's.
struct ClockAlignment {
  int32_t domain = 0;
  double offset_ms = 0;  // subtracted from its times
  double spread_ms = 0;  // p95 - p5 of the completion differences it rests on
  int64_t matched = 0;   // collectives it rests on; 0: not aligned (none matched)
};

struct DistributedAnalysis {
  int32_t world_size = 0;  // distributedInfo's, else the ranks seen
  std::string backend;
  std::vector<RankRow> ranks;  // by rank
  int64_t matched_collectives = 0;
  double skew_p50_ms = 0, skew_p95_ms = 0, skew_max_ms = 0;  // last minus first arrival
  double step_ms = 0;                                        // the job's step: mean over ranks
  double exposed_comm_ms = 0;                                // per step, median rank
  double comm_ms = 0;                                        // per step, median rank
  double compute_ms = 0;                                     // per step, median rank
  std::vector<CollectiveGroup> groups;                       // most exposed time first
  std::optional<double> link_gbps;                           // per direction, where known
  std::string link;                                          // "NVLink 4", "" unknown
  std::optional<Straggler> straggler;
  std::vector<ClockAlignment> clocks;  // one per clock domain besides the reference
  // what-ifs: kFixStraggler, kHideCommunication (largest gain first).
  std::vector<whatif::Estimate> remedies;
};

// Aligns the clock domains of `ranks` (RankSummary::domain) to that of the lowest rank by
// the completion of matched collectives (docs/DISTRIBUTED.md); returns one entry per
// other domain. Ranks of one domain share a clock and move together.
std::vector<ClockAlignment> align_clocks(std::vector<RankSummary>& ranks);

// The cross-rank analysis of the summaries (sorted by rank here).
DistributedAnalysis analyze_ranks(std::vector<RankSummary> ranks);

// Per-direction NVLink bandwidth of a GPU of NVLink generation `gen` (GB/s): 2: 150,
// 3: 300, 4: 450, 5: 900 (NVIDIA's V100, A100, H100/H200 and B200 figures, halved from
// the bidirectional ones); nullopt for none or unknown.
std::optional<double> nvlink_gbps(int gen);

}  // namespace chokepoint::analyses::distributed
