// Python stack sampling during `run` and `watch --pid` (sampler/pyspy/): py-spy starts
// once the job has a Python process (the topmost one of the tree, with its subprocesses),
// retries while the interpreter is still starting, and gives up with one line when it
// cannot attach (no py-spy, no ptrace rights); the run goes on either way. At the end
// its file is closed, the job's source lines it names are saved beside it, and meta.json
// says what was recorded (samples::StacksMeta).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "live/session.h"
#include "sampler/pyspy/pyspy_recorder.h"

namespace chokepoint::live {

struct StackOptions {
  bool enabled = true;        // --no-stacks turns it off
  std::string pyspy;          // --py-spy PATH ("" search)
  double rate_hz = 20;        // --stack-rate
  bool subprocesses = false;  // --stack-subprocesses
};

class StackSampling {
 public:
  StackSampling(const StackOptions& o, std::string dir, bool quiet);
  ~StackSampling();
  // Called after every tick: starts (or retries) py-spy when the job has a Python process.
  void poll(const Session& session, int64_t now_realtime_ns, int64_t now_monotonic_ns);
  // Stops py-spy (it exits by itself once the job has), saves the source lines and sets
  // the recording's stacks meta. Before Session::finish.
  void finish(Session& session);

 private:
  StackOptions o_;
  std::string dir_;
  bool quiet_ = false;
  std::string binary_, version_, note_;
  bool gave_up_ = false;
  int attempts_ = 0;
  int64_t next_attempt_mono_ = 0;
  std::string cwd_;  // the target's working directory (relative source file names)
  std::unique_ptr<sampler::PySpyRecorder> rec_;
};

}  // namespace chokepoint::live
