// Python stack sampling during `run` and `watch --pid` (sampler/pyspy/): py-spy starts
// once the job has a Python process (the topmost one of the tree, with its subprocesses),
// retries while the interpreter is still starting, and gives up with one line when it
// cannot attach (no py-spy, no ptrace rights); the run goes on either way. At the end
// its file is closed, the job's source lines it names are saved beside it, and meta.json
// says what was recorded (samples::StacksMeta).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/burst_schedule.h"
#include "live/session.h"
#include "sampler/pyspy/pyspy_recorder.h"
#include "samples/metadata.h"

namespace chokepoint::live {

// What the bursts of a job say so far about its steps.
struct BurstSteps {
  bool loop_in_last = false;  // the last burst went round the job's training loop
  bool sure = false;          // the bursts together count its steps surely
};
using BurstJudge = std::function<BurstSteps(const std::string& dir, const std::vector<samples::StackBurst>& bursts)>;

struct StackOptions {
  bool enabled = true;        // --no-stacks turns it off
  std::string pyspy;          // --py-spy PATH ("" search)
  double rate_hz = 20;        // --stack-rate
  bool subprocesses = false;  // --stack-subprocesses
  // Bursts of fast samples that count the job's iterations (steps without a trace):
  // --stack-burst HZ, 0 none. When they come: burst_schedule.h.
  double burst_hz = 500;
  // Reads the bursts kept so far (`run` passes the diagnosis's reading, pipeline/
  // burst_steps.h): whether the last went round the job's loop and whether together they
  // count its steps surely. None: every burst that moved counts and settles it.
  BurstJudge judge;
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
  // The burst now sampling, the bursts kept, when the next starts.
  std::unique_ptr<sampler::PySpyRecorder> burst_;
  std::string burst_file_;
  std::optional<BurstSchedule> schedule_;  // from the first poll after py-spy attached
  int64_t attached_mono_ = 0;              // py-spy started on the job
  double burst_cpu_s_ = 0;
  std::vector<samples::StackBurst> bursts_;
  void poll_burst(const Session& session, int64_t now_realtime_ns, int64_t now_monotonic_ns);
  void end_burst(bool stop, int64_t now_monotonic_ns);
  BurstOutcome outcome(const std::filesystem::path& burst) const;
};

}  // namespace chokepoint::live
