#include "analyses/whatif/recording_cost.h"

#include <algorithm>

namespace chokepoint::analyses::whatif {

namespace {

// torch.profiler (Kineto) on the H200 machine, PyTorch 2.11: the profiled host of five
// launch-bound programs (tests/data/pairs) against the same programs timed without it,
// per recorded ATen op and CUDA call. record_shapes made no measurable difference (a
// loop of 300 tiny ops: 6.64 ms profiled with shapes, 6.73 without, 3.5-3.7 plain).
constexpr TimeNs kProfilerPerOpNs = 6'000;
constexpr TimeNs kProfilerPerCallNs = 2'000;
// with_stack=True: healthy_bf16's profiled host went from 4.64 to 8.07 ms per step for
// 576 python_function events (6 us each); input_bound's from 33.2 to 37.2 ms for 1261
// (3 us each): 5 us.
constexpr TimeNs kProfilerPerPythonNs = 5'000;
// The CUPTI tracer of `run --trace` (CUPTI callbacks and activity records inside every
// recorded call), measured on the H200 inside one process, steps in a window against steps
// outside (benchmarks/tracer_cost/gpu_window_cost.sh; docs/BENCHMARKS.md): 0.37 and 0.79 ms
// per step of ~122 traced calls (3.0 and 6.4 us a call); lstm_lm's window, 2.5 ms per step
// of 469 launches (5.3 us). The median, 5 us.
constexpr TimeNs kTracerPerCallNs = 5'000;
// Never take more than this share of a recorded gap or call: the model is an average.
constexpr double kKeepAtLeast = 0.25;

}  // namespace

RecordingCost recording_cost_for(const timeline::Timeline& tl) {
  RecordingCost c;
  bool kineto = false, cupti = false;
  for (const auto& s : tl.sources) {
    kineto |= s.format == "kineto";
    cupti |= s.format == "cupti";
  }
  if (kineto && !cupti) {
    c.recorder = "torch.profiler";
    c.per_op = kProfilerPerOpNs;
    c.per_call = kProfilerPerCallNs;
    c.per_python = kProfilerPerPythonNs;
  } else if (cupti && !kineto) {
    c.recorder = "chokepoint tracer";
    c.per_call = kTracerPerCallNs;
    c.window = std::all_of(tl.sources.begin(), tl.sources.end(),
                           [](const timeline::Source& s) { return s.format != "cupti" || s.trace_window; });
  }
  return c;
}

RecordingCost with_high_tracer_cost(RecordingCost c) {
  if (c.recorder == "chokepoint tracer") c.per_call = c.window ? kTracerWindowPerCallHighNs : kTracerPerCallHighNs;
  return c;
}

Plan without_recording_cost(const StepGraph& g, Plan p, const RecordingCost& c) {
  if (!c.known()) return p;
  for (size_t i = 0; i < g.host.size(); ++i) {
    const HostEvent& e = g.host[i];
    // A recorded call's own cost comes out of its time first; what its time cannot give
    // (the recorder's work before and after the call, outside the interval it records)
    // comes out of the gap before it. Taken from the call alone, a launch of 4 us gave
    // 3 of the 5 us: decode_graphs under `run --trace` kept half the tracer's cost.
    const TimeNs dur = p.dur[i];
    const TimeNs own = std::clamp(dur - static_cast<TimeNs>(kKeepAtLeast * static_cast<double>(dur)), TimeNs{0},
                                  c.per_call);
    p.dur[i] = dur - own;
    const TimeNs cost = c.per_op * e.ops_in_gap + c.per_input * e.inputs_in_gap + c.per_call * e.calls_in_gap +
                        c.per_python * e.py_in_gap + (c.per_call - own);
    const TimeNs gap = p.gap[i];
    if (gap > 0) {
      const TimeNs after = std::max(gap - cost, static_cast<TimeNs>(kKeepAtLeast * static_cast<double>(gap)));
      // A DataLoader wait shrinks with the rest when loading ran in this process (its
      // Python and ops were recorded too); waiting on workers records nothing.
      p.gap_loader[i] = static_cast<TimeNs>(static_cast<double>(p.gap_loader[i]) * static_cast<double>(after) /
                                            static_cast<double>(gap));
      p.gap[i] = after;
    }
  }
  return p;
}

}  // namespace chokepoint::analyses::whatif
