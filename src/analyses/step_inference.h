// Step inference: iterations of a workload that has no step annotations, found from the
// periodic structure of its GPU work. A training or inference loop issues the same
// sequence of kernels and copies every iteration, so the sequence of GPU op names (in
// the order the CPU issued them) repeats with a period of P ops.
//
// Method, per source (one process's trace):
//  1. The op names of its busiest stream, in the order they ran (one stream runs its ops
//     in issue order; GPU order also places ops whose launch was not recorded).
//  2. The base period: for every name seen at least 3 times, the median distance between
//     its occurrences is a candidate; the shortest candidate at which the sequence matches
//     itself shifted by it for at least 85% of the ops. A name issued once per iteration
//     (a loss kernel, the optimizer's update) gives the iteration's length; a layer's
//     period fails (the backward pass and the optimizer differ from the forward layers).
//  3. Where cycles start: before each op, the pause (the CPU's time since the previous
//     launch, plus the GPU's idle time). The base period is the iteration when one phase
//     has a pause in two thirds of its cycles that is 1.5x the median pause (and >= 20 us):
//     data loading, the optimizer's host work, a sync. Otherwise (identical layers with
//     nothing else: an MLP repeats every 2 ops) the shortest multiple of it that has one.
//  4. Whole cycles only, at least 3; the partial cycle before the first is the warm-up.
//     A cycle whose op count is off the period by more than 2% (and 2 ops) is other work
//     (an evaluation pass, a checkpoint) and is left out. Ops that come every few
//     iterations (a logging step's .item() copy) shift an iteration by a few ops: the period
//     also holds when 60% of ops repeat exactly and 85% within p/64 ops (1 to 16).
//  5. Where no period repeats (dynamic shapes pick other kernels from one iteration to the
//     next), the iteration is anchored on the op that begins it: of the names issued after
//     a pause of 8x the typical one in two thirds of their occurrences, the one whose
//     pauses add up to the most; a cycle from one occurrence to the next, those of over
//     1.5x (under 1/1.5x) the median op count other work, and no steps at all where that
//     is over a quarter of them (an op that comes twice an iteration, or not in each).
// Steps whose sequence changes and that have no pause at their start (data-dependent
// control flow inside a GPU-bound loop) are not inferred, and an iteration made of
// identical parts each ending in the same pause (a .item() after every layer) is inferred
// per part: annotate those (NVTX ranges named "step").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/index.h"
#include "timeline/model.h"

namespace chokepoint::analyses {

// One whole cycle of the repeating sequence.
struct InferredCycle {
  TimeNs cpu_start = 0;        // issue time of the cycle's first op
  TimeNs cpu_end = 0;          // issue time of the next cycle's first op (or the last call's end)
  TimeNs gpu_end = 0;          // end of the cycle's last-finishing op
  int32_t pid = -1, tid = -1;  // thread that issued the first op, -1 unknown
  int64_t ops = 0;             // GPU ops in the cycle
};

struct InferredSteps {
  int32_t source = 0;
  int64_t period_ops = 0;  // GPU ops per iteration (anchored: the median)
  double match = 0;        // share of ops equal to the op one period later (anchored: 0)
  bool anchored = false;   // no period repeats: cycles between an op that begins every iteration
  std::vector<InferredCycle> cycles;
  int64_t other_cycles = 0;  // cycles of another length left out (evaluation, checkpoints)
};

// Iterations of each source that has a repeating sequence; sources without one are left out.
std::vector<InferredSteps> infer_steps(const timeline::Timeline& tl, const TimelineIndex& ix);

}  // namespace chokepoint::analyses
