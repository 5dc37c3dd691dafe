// GIL waiting, from stacks and thread CPU: a Python thread whose stack is in Python code
// (not in a call that blocks: sleep, a lock, a queue, a socket, a sync with the GPU)
// wants the GIL; if it is off the CPU while it wants it, it may be waiting for the GIL.
// py-spy's output keeps no per-sample GIL flag (sampler/pyspy/pyspy_recorder.h), so this
// is measured per process over the recording's thread CPU samples:
//
//   want_s  time the thread's sampled stack was in Python code (innermost line not a wait)
//   cpu_s   its CPU time over the span its stacks cover (/proc/PID/task/TID/stat)
//   wait_s  the time it wanted the GIL and was off the CPU (per CPU reading's interval),
//           bounded by the other Python threads' CPU time: a thread waits for the GIL only
//           while another holds it, and a holder is on the CPU
//   run_s   want_s - wait_s
//
// The bound is what keeps a thread that is off the CPU in native code (a CUDA call that
// blocks, a page fault, a line not known to wait) from reading as GIL contention when the
// other threads barely ran: a DataLoader's pin-memory thread beside a GPU-bound training
// loop (docs/VALIDATION.md, "GIL contention"). A single busy thread never waits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "samples/series.h"
#include "samples/stacks.h"

namespace chokepoint::analyses {

struct GilThread {
  int64_t tid = 0;
  std::string name;
  double want_s = 0, cpu_s = 0, run_s = 0, wait_s = 0;
};

struct GilProcess {
  int64_t pid = 0;
  std::vector<GilThread> threads;  // Python threads that wanted the GIL, most wait first
  double want_s = 0, wait_s = 0;
  double wait_share() const { return want_s > 0 ? wait_s / want_s : 0; }
};

// Processes with at least two Python threads that wanted the GIL, most waiting first.
// `tick_ns` are the recording's tick times (thread CPU samples hold for the tick before).
std::vector<GilProcess> gil_waiting(const samples::PyStacks& stacks, const samples::SampleStore& st, int64_t start_ns,
                                    int64_t end_ns);

// Whether a stack is waiting rather than running Python: its innermost frame of the job's
// code calls something that blocks, or a library frame inside it is a known wait.
bool stack_waits(const samples::PyStacks& s, const std::vector<int32_t>& stack);

}  // namespace chokepoint::analyses
