// Analysis: every analysis of one timeline, run once, as plain data for the rules.
// A pure function of the model (docs/ARCHITECTURE.md convention 4): nothing here renders or decides.
#pragma once

#include "analyses/api_calls.h"
#include "analyses/breakdown.h"
#include "analyses/fusion.h"
#include "analyses/index.h"
#include "analyses/kernels.h"
#include "analyses/roofline.h"
#include "analyses/steps.h"
#include "analyses/transfers.h"
#include "analyses/whatif/whatif.h"
#include "machine/context.h"

namespace chokepoint::analyses {

// How faithfully the recorded steps replay (whatif/replay.h), and what the recording cost.
struct ReplaySummary {
  bool available = false;       // the trace has CUDA API calls and GPU ops to replay
  int64_t steps = 0;            // windows of the replayed process
  double recorded_step_ms = 0;  // the recorded windows, per step
  double replayed_step_ms = 0;  // the same replayed as recorded (its difference is the model's error)
  double plain_step_ms = 0;     // replayed without the recorder's cost: the run without the profiler
  std::string recorder;         // "torch.profiler", "chokepoint tracer", "" when its cost is unknown
  bool threads_overlapped = false;
};

struct Analysis {
  TimelineIndex index;
  StepWindows windows;
  WindowMembership membership;
  Breakdown breakdown;
  KernelStats kernels;
  TransferStats transfers;
  ApiCallStats api;
  FusionStats fusion;
  RooflineStats roofline;
  int primary_device = -1;                         // device that ran the most GPU time, -1 none
  machine::Ceilings ceilings;                      // of the primary device
  std::vector<machine::Ceilings> device_ceilings;  // of every device, in the timeline's order
  int cpus = 0;                                    // of the host, 0 unknown (machine context)
  // Remedies replayed on the recorded steps (whatif/), largest gain first.
  std::vector<whatif::Estimate> remedies;
  // Remedies the trace shows already on (CUDA graphs, a fused optimizer): not advised.
  std::vector<whatif::Remedy> already_applied;
  ReplaySummary replay;

  int64_t steps() const { return static_cast<int64_t>(windows.steps.size()); }
  // Totals over all analyzed windows.
  const StepBreakdown& total() const { return breakdown.total; }
  // Share of the analyzed time, in percent.
  double pct(TimeNs ns) const;
  // Mean per step, in ms.
  double ms_per_step(TimeNs ns) const;
  // Mean count per step.
  double per_step(double count) const { return steps() > 0 ? count / static_cast<double>(steps()) : 0.0; }
};

// The ceilings come from the machine context (one per device of tl, in order), resolved by
// the pipeline; nothing here reads a file or the environment.
// what_ifs false: without the remedies' replays (the per-rank pass of a distributed job,
// which needs each rank's breakdown only).
Analysis analyze(const timeline::Timeline& tl, const machine::MachineContext& ctx, bool what_ifs = true);
// The same with every device's published ceilings (tests, fuzzers, benchmarks).
Analysis analyze(const timeline::Timeline& tl);

// The devices of a timeline as the machine layer looks them up.
std::vector<machine::DeviceSpec> device_specs(const timeline::Timeline& tl);

// The what-if estimate of remedy r, if it applied.
const whatif::Estimate* estimate_of(const Analysis& a, whatif::Remedy r);

// Whole-step speedup if `saved` ns of the analyzed time disappeared, but never below
// `floor` ns (the part of the step another resource still needs, e.g. the host's work).
double projected_speedup(TimeNs total, TimeNs saved, TimeNs floor);

}  // namespace chokepoint::analyses
