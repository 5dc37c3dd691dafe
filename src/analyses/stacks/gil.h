// GIL waiting, from stacks and thread CPU: a Python thread whose stack is in Python code
// (not in a call that blocks: sleep, a lock, a queue, a socket, a sync with the GPU)
// wants the GIL; if it runs less than that time, it waited for the GIL the rest of it.
// py-spy's output keeps no per-sample GIL flag (sampler/pyspy/pyspy_recorder.h), so this
// is measured per process over the recording's thread CPU samples:
//
//   want_s  time the thread's sampled stack was in Python code (innermost line not a wait)
//   run_s   its CPU time over the same ticks (/proc/PID/task/TID/stat)
//   wait_s  max(0, want_s - run_s) per tick, summed
//
// A single busy thread never waits: it runs whenever it wants to.
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
  double want_s = 0, run_s = 0, wait_s = 0;
};

struct GilProcess {
  int64_t pid = 0;
  std::vector<GilThread> threads;  // Python threads that wanted the GIL, most wait first
  double want_s = 0, wait_s = 0;
  double wait_share() const { return want_s > 0 ? wait_s / want_s : 0; }
};

// Processes with at least two Python threads that wanted the GIL, most waiting first.
// `tick_ns` are the recording's tick times (thread CPU samples hold for the tick before).
std::vector<GilProcess> gil_waiting(const samples::PyStacks& stacks, const samples::SampleStore& st,
                                    const std::vector<int64_t>& tick_ns, int64_t start_ns, int64_t end_ns);

// Whether a stack is waiting rather than running Python: its innermost frame of the job's
// code calls something that blocks, or a library frame inside it is a known wait.
bool stack_waits(const samples::PyStacks& s, const std::vector<int32_t>& stack);

}  // namespace chokepoint::analyses
