// What recording the trace cost the host, so a what-if predicts the run without the
// profiler (docs/FORMATS.md "Prior art": torch.profiler makes a launch-bound step 1.5-2.8x
// slower; a gain computed from the profiled host would be that much too high).
//
// torch.profiler runs callbacks at the entry and exit of every ATen op and CUPTI records
// every CUDA call; both land in the host time between the calls a trace shows. The costs
// below were measured on the project's H200 machine (docs/VALIDATION.md, "Recording
// cost"): the same programs timed plain and profiled, the difference divided among their
// recorded ops and calls. A what-if subtracts them from every host gap and call before
// replaying, never below a quarter of what was recorded.
#pragma once

#include <string>

#include "analyses/whatif/replay.h"
#include "timeline/model.h"

namespace chokepoint::analyses::whatif {

struct RecordingCost {
  std::string recorder;   // "torch.profiler", "chokepoint tracer", "" unknown
  bool window = false;    // the tracer recorded a window of the job, not all of it
  TimeNs per_op = 0;      // per ATen op event
  TimeNs per_input = 0;   // per recorded input tensor (record_shapes)
  TimeNs per_call = 0;    // per CUDA API call recorded
  TimeNs per_python = 0;  // per python_function event (with_stack)
  bool known() const { return per_op > 0 || per_input > 0 || per_call > 0 || per_python > 0; }
};

// The cost model of the recorder that made the trace (from its sources' formats).
RecordingCost recording_cost_for(const timeline::Timeline& tl);

// The chokepoint tracer's cost per call is not one figure: on the H200 the same rounds
// measured ~4 us a launch on one launch-bound loop and 4.5-13 us on a decode step
// (docs/BENCHMARKS.md "Whole-job traces"); inside a window 3.0-6.4 us (the window against
// the steps outside it, in one process: "Inside a window against outside it"). The model
// takes kTracerPerCallNs; these are the high ends, for the range a what-if from a CUPTI
// trace states.
inline constexpr TimeNs kTracerPerCallHighNs = 13'000;
inline constexpr TimeNs kTracerWindowPerCallHighNs = 6'500;
// `c` with the tracer's cost per call at its high end (a window's or a whole job's); other
// recorders' costs unchanged.
RecordingCost with_high_tracer_cost(RecordingCost c);

// `p` with the recording's cost taken out of every gap and call.
Plan without_recording_cost(const StepGraph& g, Plan p, const RecordingCost& c);

}  // namespace chokepoint::analyses::whatif
