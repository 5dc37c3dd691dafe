// Steps from Python stack samples alone (`run` without a trace): the training loop is
// found in the job's own frames, and its iterations are counted where the loop's line
// goes back up (the body runs top to bottom, so each new iteration starts at a lower line
// than the last sample of the previous one). Sampling faster than the step is needed:
// `run` takes short fast bursts of samples for this (live/stack_sampling.h).
//
// The period is what the intervals that fit it add up to, divided by the iterations in
// them: an interval that holds two or three iterations (a wrap missed where one line spans
// it) counts as two or three. An interval longer than that whose extra time was spent at
// the loop's header (the `for` line, waiting for the next batch) is one iteration that
// waited, counted as it ran. Intervals in which the thread left the loop's function, and
// the rest (evaluation, checkpoints, warm-up), are left out and counted. Exact to a
// sample's time at each end of the run of intervals, so the mean step is within a fraction
// of a percent over a few hundred steps; a single step's time is only known to one
// sampling interval.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "samples/stacks.h"

namespace chokepoint::analyses {

struct LoopSteps {
  bool found = false;
  double step_ns = 0;               // mean iteration time over the counted intervals
  int64_t steps = 0;                // iterations counted
  int64_t other = 0;                // intervals left out (not one to three iterations)
  double counted_ns = 0;            // time inside the counted intervals
  std::vector<double> per_step_ns;  // each counted interval / its iterations
  std::string file, function;       // the loop's frame
  double rate_hz = 0;               // the samples' rate
  double samples_per_step = 0;
  bool ambiguous = false;         // half the period explains the samples as well
  int64_t waited = 0;             // iterations that waited at the loop's header for their batch
  std::vector<double> fitted_ns;  // the iterations that fit the period (rel_se)
  std::string why_not;            // when !found
  // Each burst's own mean step, in the bursts' order (combine_loop_steps), for those that
  // counted enough iterations to have one: a job whose step drifts within its run shows it
  // here, and the pooled mean is then the mean of the stretches sampled.
  std::vector<double> part_step_ns;

  // Enough samples a step and iterations counted, their mean known to kSureRelSe, and no
  // other period explains them as well.
  bool sure() const;
  // The standard error of the mean step over the intervals that fit the period, relative
  // to their mean (how well one period explains them; the iterations that waited for their
  // batch are measured one by one and vary as the loader keeps up or not).
  double rel_se() const;
  // The median counted iteration (what training scripts print).
  double median_ns() const;
  // The slowest burst's mean step over the fastest's; 1 with fewer than two.
  double drift() const;
};

// Fewer samples a step than this and a step-long line can hide a whole iteration.
inline constexpr double kSureSamplesPerStep = 3.0;
// Fewer counted iterations than this and which intervals pass for one iteration sways the
// mean of a job whose step drifts (resnet_fake at 50 Hz: 18 counted, +16%).
inline constexpr int64_t kSureSteps = 20;
// And the counted intervals must agree: a mean step whose standard error is over this share
// of it is not reported. 2 s slices of the H200 programs (tests/golden/loop_steps_golden_test.cc)
// that read 30-52% off had 3.7-6.3%; those within 5% of the printed step 1.4-3.2%.
inline constexpr double kSureRelSe = 0.03;

// The loop of the main thread (of the process) that spends the most time in the job's own
// frames; of any thread when no main thread has a stack there.
LoopSteps find_loop_steps(const samples::PyStacks& s);

// Several sample sets of the same job (bursts): the loop most of them found, its
// intervals pooled. Not found when none found one.
LoopSteps combine_loop_steps(const std::vector<LoopSteps>& parts);

// Bursts whose mean steps differ by more than this ratio are reported as a drifting step
// (bert_finetune on the H200: 24 ms early in a 3.5 s training, 29-37 ms after its
// evaluation; the bursts' pooled mean read +20% against the run's median).
inline constexpr double kDriftRatio = 1.15;

// "gpt_char.py main()" and the sampling behind it, for a report's step source.
std::string loop_steps_source(const LoopSteps& l);

}  // namespace chokepoint::analyses
