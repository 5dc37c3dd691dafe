// Step windows. A step's CPU span (ProfilerStep#N) ends long before the GPU finishes the
// work it launched when the job is GPU-bound, so the window of step N runs from its CPU
// start (or the end of step N-1's window, whichever is later) to the later of its CPU end
// and the end of the last GPU op launched inside its CPU span (the TensorBoard plugin's
// definition, docs/FORMATS.md "Kineto trace"). Windows do not overlap; their lengths are the
// step times. Without step annotations (ProfilerStep#N, NVTX step ranges) the steps are
// inferred from the repeating GPU op sequence (step_inference.h); failing that, the whole
// trace is one window.
#pragma once

#include <string>
#include <vector>

#include "analyses/index.h"
#include "timeline/model.h"

namespace chokepoint::analyses {

struct StepWindow {
  int64_t number = 0;
  int32_t source = 0;
  int32_t pid = -1, tid = -1;  // thread that ran the step (launches most GPU work)
  TimeNs cpu_start = 0, cpu_end = 0;
  TimeNs gpu_end = -1;        // end of the last GPU op launched in the CPU span, -1 none
  TimeNs start = 0, end = 0;  // the analysis window
  TimeNs duration() const { return end - start; }
};

struct StepWindows {
  std::vector<StepWindow> steps;
  bool whole_trace = false;  // no step annotations, none inferred: one window over everything
  bool inferred = false;     // steps found from the repeating GPU op sequence (step_inference.h)
  std::string method;        // for the report
};

StepWindows compute_step_windows(const timeline::Timeline& tl, const TimelineIndex& ix);

}  // namespace chokepoint::analyses

namespace chokepoint::analyses {

// Window index of each GPU op (by its start; windows of the op's device's source) and of
// each runtime call (by its start; windows of the call's process), -1 outside all windows.
struct WindowMembership {
  std::vector<int32_t> gpu_op;
  std::vector<int32_t> runtime_call;
};
WindowMembership assign_windows(const timeline::Timeline& tl, const StepWindows& w);

}  // namespace chokepoint::analyses
