// Replays a StepGraph: a discrete-event simulation of the host issuing its calls in order
// and the GPU running each stream's ops in order, honouring every dependency the graph
// holds (step_graph.h). A Plan says what each call, gap and op costs; the baseline plan
// is the recording itself, and a remedy (remedies.h) is a change to the plan. The
// replayed baseline is compared with the recorded span: that difference is the replay's
// own error, reported beside every estimate.
#pragma once

#include <cstdint>
#include <vector>

#include "analyses/whatif/step_graph.h"

namespace chokepoint::analyses::whatif {

struct Plan {
  // Per host event.
  std::vector<TimeNs> gap;         // host time before the call
  std::vector<TimeNs> gap_loader;  // of which waiting in DataLoader.__next__
  std::vector<TimeNs> dur;         // the call's own time when it does not wait
  std::vector<uint8_t> waits;      // 1: returns only after its waits_for node ends
  // Per GPU node.
  std::vector<TimeNs> node_dur;
  std::vector<uint8_t> node_removed;  // the op does not run (and holds nothing up)
  std::vector<int32_t> node_launch;   // host event that makes it ready, -1 none
  std::vector<TimeNs> node_spacing;   // at least this after the previous op of its lane starts
  TimeNs tail = 0;                    // host time after the last call
  TimeNs launch_latency = 0;          // call start -> op ready
  double samples_factor = 1.0;        // samples per step against the recording (batch size)
  TimeNs min_step = 0;                // a bound from outside the replay (the DataLoader's supply)

  // The recording as it was.
  static Plan baseline(const StepGraph& g);
};

struct ReplayResult {
  TimeNs total = 0;              // origin to the last host or GPU activity
  TimeNs host_end = 0;           // relative to the origin
  TimeNs gpu_busy = 0;           // union of replayed GPU op time
  std::vector<TimeNs> step_end;  // per window of the graph, relative to the origin
};

ReplayResult replay(const StepGraph& g, const Plan& p);

// Time per step in the steady state: from the end of the first window to the end of the
// last, over one step fewer (the first window also holds what the GPU had queued before
// the trace began); the whole replay over all steps with fewer than 3 windows.
double steady_step_ns(const ReplayResult& r);

}  // namespace chokepoint::analyses::whatif
