// The search of `chokepoint tune`, over trials that a caller-given function runs (the
// real runner, or a model of a job in the tests).
//
// Strategy ("coordinate"): first the largest batch that fits, by binary search on
// out-of-memory over the batch values with the other parameters at their middle (an
// ordered one) or first (a list) value: the largest value first, then halving the range
// (Lightning's batch-size finder and accelerate's shrink-on-OOM do the same, by doubling
// or by shrinking). Then coordinate line searches: one parameter at a time (lists first,
// then ordered parameters, the batch size last), the others at the best configuration so far; along an ordered parameter throughput is taken to be
// unimodal: its two ends and its middle, then the midpoints on either side of the best
// until its neighbours are adjacent (a bracketing search, ~2 log2(n) trials); a list is
// tried value by value; along the batch size out of memory scores lowest, so the search
// closes in on the largest batch that fits with the other values. Rounds after
// the first climb from the best to its neighbours only, and the search ends after a round
// that found nothing better. "grid": every configuration (the reference to compare with).
//
// Each trial is run once: a configuration already in the trials (this run's or the
// resumed file's, unless interrupted) is not run again. The search stops at the time
// budget or the trial cap (checked before each trial), at an interrupted trial, and
// when the command cannot be measured at all (no throughput printed, or its first
// trials all fail).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tune/space.h"
#include "tune/trial.h"

namespace chokepoint::tune {

struct SearchOptions {
  bool grid = false;
  int max_trials = 0;   // trials run now, at most (0: no cap)
  double budget_s = 0;  // no trial starts after this many seconds (0: no budget)
};

struct SearchResult {
  std::vector<Trial> trials;   // resumed ones first, then this run's, in order
  std::optional<size_t> best;  // index into trials: the highest throughput of a measured (ok) trial
  int run = 0;                 // trials run now
  int resumed = 0;             // finished trials read from the trials file
  // The batch limit with the best configuration's other values: the largest batch value
  // that ran, the smallest that ran out of memory ("" when none did or there is no batch
  // parameter); without a best, the first batch search's.
  std::string max_fit_batch, oom_batch;
  std::string stopped;   // "" (the search ended), "budget", "max_trials", "interrupted", "no_metric", "failing",
                         // "all_oom"
  std::string strategy;  // "coordinate" or "grid"
};

// Runs one trial of the configuration; `id` is its number, `best` the best throughput so
// far (for the early stop of a trial clearly worse).
using Evaluate = std::function<Trial(const Config& config, int id, std::optional<double> best)>;
// Seconds since some fixed point (the budget's clock).
using Clock = std::function<double()>;

SearchResult search(const Space& space, const SearchOptions& options, const Evaluate& evaluate,
                    std::vector<Trial> resumed, const Clock& now);

// The trials (indices) on the Pareto front of throughput against peak GPU memory: measured
// (ok) trials with a memory figure that no other is at least as good as in both and
// better in one; by memory, ascending.
std::vector<size_t> pareto_front(const std::vector<Trial>& trials);

}  // namespace chokepoint::tune
