// Where each finding shows in the timeline, for the Chrome/Perfetto export: per step, the
// finding's worst instance (the longest idle gap of the causes it is about, or the longest
// GPU op of the kernel classes it is about), so that "show me" is one click away.
#pragma once

#include <vector>

#include "analyses/analysis.h"
#include "analyses/idle_gaps.h"
#include "exporters/chrome_trace.h"
#include "rules/finding.h"
#include "timeline/model.h"

namespace chokepoint::pipeline {

// `gaps` are analyses::idle_gaps() of the same analysis. A finding about neither idle time
// nor GPU work (io, the samples' findings) gets one marker at the start of the first step.
std::vector<exporters::ChromeMarker> finding_markers(const timeline::Timeline& tl, const analyses::Analysis& a,
                                                     const std::vector<rules::Finding>& findings,
                                                     const std::vector<analyses::IdleGap>& gaps);

}  // namespace chokepoint::pipeline
