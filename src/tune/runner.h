// Runs one trial of `chokepoint tune`: the command under the same live recording as
// `chokepoint run` (live/monitor.h: its own process group, NVML and /proc sampled), its
// stdout and stderr into files of the trial's folder, read while it runs. Measured by a
// throughput the program prints (--metric REGEX, group 1 the number), or without one by
// the step analysis of the recording (a CUPTI trace of a window of steps; samples/s when
// the batch size is known). Ended by the runner once it measured enough, when clearly
// worse than the best so far (early stop), as soon as its output says it ran out of
// memory (PyTorch with DataLoader workers can take a minute to exit after the error: on
// the H200, 54 s with 8 workers, past a 60 s timeout with 16), at the per-trial timeout
// (the whole process group: SIGTERM, SIGKILL 5 s later). Then the recording's diagnosis gives its verdict
// and the GPUs' peak memory used.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tune/pattern.h"
#include "tune/trial.h"

namespace chokepoint::tune {

struct RunnerOptions {
  std::string dir;                // where the trials' folders go (trial-<id>/)
  std::optional<Pattern> metric;  // group 1 (else the match) is a throughput
  std::optional<Pattern> memory;  // group 1: the program's peak GPU memory, MiB
  int steps = 20;                 // values (or steps) to measure after the warm-up
  int warmup = 2;                 // first values (steps) left out
  double timeout_s = 300;         // a trial still running then is killed
  double early_stop = 0.5;        // stop a trial below this share of the best (0: never)
  int early_stop_after = 3;       // ... once it measured this many values
  std::string tracer_library;     // without --metric: the CUPTI tracer for the steps
  bool gpu = true;                // NVML sampling
};

Trial run_trial(const RunnerOptions& o, const std::vector<std::string>& argv, int id, std::optional<double> best,
                std::optional<double> batch);

// The numbers `re` finds in the lines of `text` (group 1, else the whole match), in order.
std::vector<double> scan_values(const std::string& text, const Pattern& re);
// A program's output that says it ran out of GPU memory (PyTorch, CUDA, JAX).
bool says_out_of_memory(const std::string& text);
// The median of `values` after the first `warmup` (of all when there are no more).
std::optional<double> measured_median(const std::vector<double>& values, int warmup, int* count = nullptr);

}  // namespace chokepoint::tune
