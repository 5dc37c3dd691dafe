#include "live/burst_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace chokepoint::live {
namespace {

constexpr int64_t kS = 1'000'000'000;

using Show = std::function<BurstOutcome(int64_t, int64_t, double)>;

// A job on a timeline, ticked every 100 ms as `run` ticks (the GPU busy at a tick when
// `busy(now)`); each burst lasts 2 s and what it shows is `show(start, end, training
// seconds sampled so far)`. Returns the bursts' starts.
std::vector<double> bursts_of(int64_t end, const std::function<bool(int64_t)>& busy, const Show& show) {
  BurstSchedule s(0);
  std::vector<double> starts;
  int64_t burst_end = -1, burst_start = 0;
  double sampled = 0;
  for (int64_t now = 0; now <= end; now += kS / 10) {
    if (burst_end >= 0 && now >= burst_end) {
      s.ended(now, show(burst_start, burst_end, sampled));
      burst_end = -1;
    }
    if (!s.due(now, true, busy(now)) || burst_end >= 0) continue;
    s.started(now);
    starts.push_back(static_cast<double>(now) / kS);
    burst_start = now;
    burst_end = std::min(end, now + BurstSchedule::kBurstNs);
  }
  return starts;
}

// The GPU busy in the stretches [from, to) s, idle elsewhere.
std::function<bool(int64_t)> busy_in(std::vector<std::pair<double, double>> stretches) {
  return [stretches = std::move(stretches)](int64_t now) {
    const double t = static_cast<double>(now) / kS;
    return std::any_of(stretches.begin(), stretches.end(),
                       [t](auto b) { return t >= b.first - 1e-9 && t < b.second - 1e-9; });
  };
}

// What a burst of [a, b) shows of a training loop run in [t0, t1) s: the loop when it held
// more than 0.5 s of it, and a sure count once `need` s of it were sampled in all.
Show training_in(double t0, double t1, double need, double* sampled) {
  return [=](int64_t a, int64_t b, double) {
    const auto from = static_cast<int64_t>(t0 * kS), to = static_cast<int64_t>(t1 * kS);
    const double in = static_cast<double>(std::max<int64_t>(0, std::min(b, to) - std::max(a, from))) / kS;
    *sampled += in;
    if (in > 0.5) return *sampled >= need ? BurstOutcome::kLoopSure : BurstOutcome::kLoopUnsure;
    return BurstOutcome::kNoLoop;
  };
}

// The GPU busy from `from` on.
std::vector<double> bursts_of(int64_t end, int64_t gpu_busy_from, const Show& show) {
  return bursts_of(
      end, [gpu_busy_from](int64_t now) { return now >= gpu_busy_from; }, show);
}

// unet_diffusion under plain `run` on the H200 (tests/data/programs/recorded/unet.run): the
// GPU busy from 6.5 s, its first backward 15.5-32.4 s (cuDNN autotuning), then training to
// 39 s at 63 ms a step, exit at 41 s. The bursts before training do not count, nor does the
// one that catches its first second (too few steps): the next comes 2 s after each, so two
// bursts hold training where the old schedule put one (it counted the first, which went
// round no loop, and the next after training's first 2 s was due 10 s later). The one
// that catches training's first second leaves the count unsure: the next 1.5 s after it.
TEST(BurstSchedule, WaitsOutALongFirstStepAndTakesTwoBurstsOfAShortTraining) {
  double training_sampled = 0;
  const auto show = [&](int64_t a, int64_t b, double) {
    const int64_t t0 = 32'400'000'000, t1 = 39 * kS;
    const double in = static_cast<double>(std::max<int64_t>(0, std::min(b, t1) - std::max(a, t0))) / kS;
    training_sampled += in;
    if (in > 0.5) return training_sampled >= 1.5 ? BurstOutcome::kLoopSure : BurstOutcome::kLoopUnsure;
    return BurstOutcome::kNoLoop;  // building the model, then standing in the first backward
  };
  const std::vector<double> starts = bursts_of(41 * kS, 6'500'000'000, show);
  const std::vector<double> want = {7.5, 11.5, 15.5, 19.5, 23.5, 27.5, 31.5, 35.0};
  ASSERT_EQ(starts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(starts[i], want[i], 0.11) << i;
  int in_training = 0;
  for (double t : starts) in_training += t + 2 > 32.9 && t < 38.5;
  EXPECT_EQ(in_training, 2);
  EXPECT_NEAR(starts.front(), 7.5, 0.11) << "1 s after the GPU got busy";
}

// resnet_fake (tests/data/programs/, bound by its DataLoader) under plain `run` on the
// H200: training 10.6-17.6 s at 151 ms a step, the GPU running kernels from 10.8 s (at
// 0-18% utilization), exit at 21 s. 20 iterations (3 s of them) make a sure count: the
// second burst follows the first 1.5 s after it, both inside training. (Waiting for 10%
// utilization and 4 s between them, the first came 2.7 s into training and the two held 8
// iterations: no step.) The next counted one is due 10 s later, after the job.
TEST(BurstSchedule, AShortTrainingGetsItsSecondBurstSoon) {
  double training_sampled = 0;
  const auto show = [&](int64_t a, int64_t b, double) {
    const int64_t t0 = 10'600'000'000, t1 = 17'600'000'000;
    const double in = static_cast<double>(std::max<int64_t>(0, std::min(b, t1) - std::max(a, t0))) / kS;
    training_sampled += in;
    if (in > 0.5) return training_sampled >= 3 ? BurstOutcome::kLoopSure : BurstOutcome::kLoopUnsure;
    return BurstOutcome::kNoLoop;
  };
  const std::vector<double> starts = bursts_of(21 * kS, 10'800'000'000, show);
  const std::vector<double> want = {11.8, 15.3};
  ASSERT_EQ(starts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(starts[i], want[i], 0.11) << i;
  EXPECT_GE(training_sampled, 3.0);
}

// A long job that goes round its loop from the first burst: 4, 14 and 34 s after the
// first, then every minute.
TEST(BurstSchedule, CountedBurstsSpreadOutThenOneAMinute) {
  const auto starts = bursts_of(200 * kS, 2 * kS, [](int64_t, int64_t, double) { return BurstOutcome::kLoopSure; });
  const std::vector<double> want = {3, 7, 17, 37, 97, 157};
  ASSERT_EQ(starts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(starts[i], want[i], 0.11) << i;
}

// A job whose bursts never settle it (no loop of its own code: a C++ main loop, a server)
// gets at most kMaxEarly bursts that come 2 s after the last (4 s apart), then the plan:
// 4 s (the plan's first gap is as long), 10 s, 20 s, then a minute.
TEST(BurstSchedule, EarlyBurstsAreBounded) {
  const auto starts = bursts_of(300 * kS, 0, [](int64_t, int64_t, double) { return BurstOutcome::kNoLoop; });
  std::vector<double> gaps;
  for (size_t i = 1; i < starts.size(); ++i) gaps.push_back(starts[i] - starts[i - 1]);
  ASSERT_GE(gaps.size(), static_cast<size_t>(BurstSchedule::kMaxEarly + 4));
  for (int i = 0; i <= BurstSchedule::kMaxEarly; ++i) EXPECT_NEAR(gaps[i], 4, 0.11) << i;
  EXPECT_NEAR(gaps[BurstSchedule::kMaxEarly + 1], 10, 0.11);
  EXPECT_NEAR(gaps[BurstSchedule::kMaxEarly + 2], 20, 0.11);
  EXPECT_NEAR(gaps[BurstSchedule::kMaxEarly + 3], 60, 0.11);
}

// gpt_char --compile under plain `run` on the H200 (2026-12-03): GPU utilization 0 from the
// start but for blips of 0.1-0.7 s (4.8 s, 19.2, 29.0, 30.0-30.6, 33.4, 40.8, 41.6-41.8,
// 46.4-46.6: compiling, its first iteration took 33 s), then training 47.8-53.6 s (300
// iterations, 50-60%), exit at 56 s. The ten early bursts, 2 s after each, were spent by
// 41.8 s and training fell between the next ones. Now the bursts that stand still with the
// GPU idle space out, and the GPU busy 1 s without a break brings one into training.
TEST(BurstSchedule, ALongCompileWithTheGpuIdleIsWaitedOutAndTrainingGetsABurst) {
  const auto gpu = busy_in({{4.8, 4.9},
                            {19.2, 19.3},
                            {29.0, 29.1},
                            {30.0, 30.7},
                            {33.4, 33.5},
                            {40.8, 40.9},
                            {41.6, 41.9},
                            {46.4, 46.7},
                            {47.8, 53.7}});
  double training_sampled = 0;
  const std::vector<double> starts = bursts_of(56 * kS, gpu, training_in(47.8, 53.6, 1.5, &training_sampled));
  // 1 s after the first blip; then 2, 4, 8 and 16 s after each; then the GPU woke at 47.8 s.
  const std::vector<double> want = {5.8, 9.8, 15.8, 25.8, 43.8, 48.8, 52.8};
  ASSERT_EQ(starts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(starts[i], want[i], 0.11) << i;
  EXPECT_GE(training_sampled, 2.0);
}

// unet_diffusion's GPU as the fixture recorded it (tests/data/programs/recorded/unet.run,
// utilization read every 200 ms, >= 1%): its first backward's cuDNN autotuning (15.5-32.4 s)
// keeps the GPU at 0 but for blips, one of them 1.2 s long (14.0-15.2 s); training 32.4-39 s
// at 60-80%, exit at 41 s. The bursts that stand still space out, two blips bring one early,
// and training gets two: one as it starts, and the next 1.5 s after it (it left the count unsure).
TEST(BurstSchedule, UnetsAutotuningOnAnIdleGpuThenTwoBurstsOfTraining) {
  const auto gpu = busy_in({{6.0, 6.2},   {6.4, 6.6},   {12.0, 12.2}, {13.0, 13.4}, {14.0, 15.2}, {15.6, 16.0},
                            {16.6, 16.8}, {17.8, 18.2}, {20.6, 21.0}, {21.2, 21.4}, {22.2, 22.4}, {22.6, 22.8},
                            {23.0, 23.2}, {23.8, 24.2}, {24.4, 24.6}, {24.8, 25.0}, {25.4, 25.6}, {25.8, 26.0},
                            {27.2, 27.4}, {27.8, 28.0}, {28.2, 28.4}, {28.6, 28.8}, {29.0, 29.2}, {29.4, 29.6},
                            {29.8, 30.0}, {30.2, 30.4}, {30.6, 30.8}, {31.0, 31.4}, {32.4, 39.2}});
  double training_sampled = 0;
  const std::vector<double> starts = bursts_of(41 * kS, gpu, training_in(32.4, 39.0, 3.0, &training_sampled));
  // 1 s after the first blip, 2 s after that burst; the 1.2 s blip; 8 s after the third;
  // 1 s into training; 1.5 s after that one.
  const std::vector<double> want = {7.0, 11.0, 15.0, 25.0, 33.4, 36.9};
  ASSERT_EQ(starts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(starts[i], want[i], 0.11) << i;
  int in_training = 0;
  for (double t : starts) in_training += t + 2 > 32.9 && t < 38.5;
  EXPECT_EQ(in_training, 2);
  EXPECT_GE(training_sampled, 3.0);
}

// A job that stands still on the CPU with the GPU idle and never goes round a loop (a
// long preprocessing, a C++ program): the gaps double up to a minute; the early budget is
// not spent on it.
TEST(BurstSchedule, StandingStillWithTheGpuIdleBacksOff) {
  const auto starts = bursts_of(
      400 * kS, [](int64_t) { return false; }, [](int64_t, int64_t, double) { return BurstOutcome::kNoLoop; });
  std::vector<double> gaps;
  for (size_t i = 1; i < starts.size(); ++i) gaps.push_back(starts[i] - starts[i - 1]);
  const std::vector<double> want = {4, 6, 10, 18, 34, 62, 62, 62, 62};  // the burst's 2 s + 2, 4, ... 60 s
  ASSERT_GE(gaps.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(gaps[i], want[i], 0.11) << i;
}

// No GPU read: the first burst 8 s after sampling started.
TEST(BurstSchedule, WithoutAGpuTheFirstComesAfter8s) {
  BurstSchedule s(kS);
  EXPECT_FALSE(s.due(8 * kS, false, false));
  EXPECT_TRUE(s.due(9 * kS, false, false));
}

}  // namespace
}  // namespace chokepoint::live
