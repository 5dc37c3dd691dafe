// Host hot spots of a recording with Python stacks (analyses/stacks/hotspots.h): the GPU's
// idle time from the trace when `run --trace` left one (exact), else from the sampled
// utilization of the GPU the job used; the launching thread from the trace (the thread
// that launched most GPU work), else each Python main thread except DataLoader workers'.
#pragma once

#include <optional>

#include "analyses/analysis.h"
#include "analyses/sampled/live_analysis.h"
#include "analyses/stacks/hotspots.h"
#include "samples/recording_reader.h"
#include "samples/stacks.h"
#include "timeline/model.h"

namespace chokepoint::pipeline {

// `rec` and `la` are null for a trace alone (its python_function ranges are the stacks);
// `tl` and `a` null for a recording without a trace.
std::optional<analyses::HostAttribution> attribute_host(const samples::PyStacks& stacks, const samples::Recording* rec,
                                                        const analyses::sampled::LiveAnalysis* la,
                                                        const timeline::Timeline* tl, const analyses::Analysis* a);

}  // namespace chokepoint::pipeline
