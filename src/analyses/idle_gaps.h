// The GPU's idle gaps one by one, each with the cause that took most of it: the same
// sweep and attribution as compute_breakdown (breakdown.h), kept instead of summed, for
// views that draw them (the HTML report's timeline strip, the Chrome trace export's
// idle track). A gap's cause is the largest share of it; the per-step relabelling of
// sync time the host would have spent anyway (breakdown.h) is not applied to gaps.
#pragma once

#include <vector>

#include "analyses/breakdown.h"

namespace chokepoint::analyses {

struct IdleGap {
  TimeNs start = 0, end = 0;
  int32_t device = -1;  // index into Timeline::devices
  int32_t step = -1;    // index into StepWindows::steps
  IdleCause cause = IdleCause::kUnknown;
};

// Every idle gap of every device inside the step windows, by device then time (sweep
// order); only
// those of step `only_step` (an index into windows.steps) when it is not negative.
std::vector<IdleGap> idle_gaps(const timeline::Timeline& tl, const TimelineIndex& ix, const StepWindows& windows,
                               int64_t only_step = -1);

}  // namespace chokepoint::analyses
