// The training loop in the fast stack bursts of a job still running, read as `analyze`
// reads them (analyze_pipeline.cc): after each burst `run` asks whether it went round the
// loop and whether the bursts so far count the steps surely, to know when the next is due
// (live/burst_schedule.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyses/stacks/loop_steps.h"
#include "samples/metadata.h"

namespace chokepoint::pipeline {

struct BurstLoop {
  bool loop_in_last = false;  // the last burst went round a loop of the job's code
  bool sure = false;          // all of them together count its steps surely
  analyses::LoopSteps steps;  // what they count together
};

// Reads each burst once (they are kept by file name: a run calls it after every burst).
class BurstLoopReader {
 public:
  // A burst over this many bytes is not read (it would hold up `run`'s sampling; 2 s at
  // 500 Hz of a training job is 1-2 MB): it shows no loop.
  static constexpr uintmax_t kMaxBurstBytes = 64ull << 20;
  explicit BurstLoopReader(uintmax_t max_bytes = kMaxBurstBytes) : max_bytes_(max_bytes) {}

  // `bursts` as meta.json will list them, in recording `dir`; an unreadable burst shows no loop.
  BurstLoop read(const std::string& dir, const std::vector<samples::StackBurst>& bursts);

 private:
  uintmax_t max_bytes_;
  std::map<std::string, analyses::LoopSteps> read_;
};

}  // namespace chokepoint::pipeline
