// Analysis: every analysis of one timeline, run once, as plain data for the rules.
// A pure function of the model (DESIGN.md convention 4): nothing here renders or decides.
#pragma once

#include "analyses/api_calls.h"
#include "analyses/breakdown.h"
#include "analyses/fusion.h"
#include "analyses/index.h"
#include "analyses/kernels.h"
#include "analyses/roofline.h"
#include "analyses/steps.h"
#include "analyses/transfers.h"
#include "machine/ceilings.h"

namespace chokepoint::analyses {

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
  int primary_device = -1;       // device that ran the most GPU time, -1 none
  machine::Ceilings ceilings;    // of the primary device

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

Analysis analyze(const timeline::Timeline& tl);

// Whole-step speedup if `saved` ns of the analyzed time disappeared, but never below
// `floor` ns (the part of the step another resource still needs, e.g. the host's work).
double projected_speedup(TimeNs total, TimeNs saved, TimeNs floor);

}  // namespace chokepoint::analyses
