// One trial of `chokepoint tune`: a configuration run for a short while, what it
// measured and how it ended; and the trials file (JSON lines, one trial a line, appended
// as each ends) that makes a search resumable: a rerun reads it and skips finished trials.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace chokepoint::tune {

enum class Outcome {
  kOk,           // measured
  kOom,          // out of memory: exit status not 0 and "out of memory" on its output
  kFailed,       // exited with an error that is not out of memory
  kTimeout,      // still running at the per-trial timeout: its process group killed
  kEarlyStop,    // stopped once clearly worse than the best so far
  kNoMetric,     // ran, but printed no throughput (and showed no steps)
  kInterrupted,  // Ctrl-C: not finished, run again on resume
};
const char* outcome_name(Outcome o);
std::optional<Outcome> outcome_from_name(const std::string& name);

struct Trial {
  int id = 0;                                               // 1, 2, ... in the order run
  std::vector<std::pair<std::string, std::string>> config;  // parameter, value, in --param order
  Outcome outcome = Outcome::kFailed;
  std::optional<double> throughput;  // median of the measured values after the warm-up ones
  int measured = 0;                  // values (or steps) it is the median of
  std::optional<double> peak_memory_bytes;
  std::string memory_source;  // "nvml" (the GPUs' memory used, sampled), "program" (--memory-metric)
  double seconds = 0;         // wall time of the trial
  std::optional<int> exit_code;
  std::string verdict;          // the diagnosis of its recording: "input", "compute", ...
  std::string verdict_summary;  // its one sentence
  std::string note;             // why it failed or stopped, in words
  std::string recording;        // its recording directory
  bool resumed = false;         // read from the trials file, not run now (not saved)

  // A trial that need not run again (everything but kInterrupted).
  bool finished() const { return outcome != Outcome::kInterrupted; }
};

std::string trial_to_json_line(const Trial& t);
Result<Trial> trial_from_json_line(const std::string& line);

// Appends one line; the file is created when missing.
Status append_trial(const std::string& path, const Trial& t);
// The trials of the file, in order (none when it does not exist); a line that does not
// parse (a run killed while writing it) is skipped and counted in *bad.
Result<std::vector<Trial>> read_trials(const std::string& path, int* bad = nullptr);

}  // namespace chokepoint::tune
