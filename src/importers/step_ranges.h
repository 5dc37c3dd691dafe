// Steps from named ranges: an importer whose format carries user ranges (NVTX in the
// CUPTI trace) turns the ones named like an iteration into Steps rows, so a workload
// that marks its loop gets per-step figures from its own boundaries, not inferred ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "timeline/model.h"
#include "timeline/step_name.h"

namespace chokepoint::importers {

// timeline/step_name.h: which range names name an iteration (the CUPTI tracer counts
// steps with the same test).
using timeline::step_range_number;

// Adds a Steps row (how = `how`) for each CpuRanges row from `first_row` on whose name
// names an iteration, except ranges inside another such range of the same thread (the
// outer one is the step). Steps without a number are numbered 1, 2, ... per thread.
// Returns the number of steps added.
size_t add_steps_from_ranges(timeline::Timeline& tl, size_t first_row, int32_t source_index, timeline::StepSource how);

}  // namespace chokepoint::importers
