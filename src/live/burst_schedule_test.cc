#include "live/burst_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace chokepoint::live {
namespace {

constexpr int64_t kS = 1'000'000'000;

// A job on a timeline, ticked every 100 ms as `run` ticks; each burst lasts 2 s and what it
// shows is `show(start, end, training seconds sampled so far)`. Returns the bursts' starts.
std::vector<double> bursts_of(int64_t end, int64_t gpu_busy_from,
                              const std::function<BurstOutcome(int64_t, int64_t, double)>& show) {
  BurstSchedule s(0);
  std::vector<double> starts;
  int64_t burst_end = -1, burst_start = 0;
  double sampled = 0;
  for (int64_t now = 0; now <= end; now += kS / 10) {
    if (burst_end >= 0) {
      if (now < burst_end) continue;
      s.ended(now, show(burst_start, burst_end, sampled));
      burst_end = -1;
    }
    if (!s.due(now, true, now >= gpu_busy_from)) continue;
    s.started(now);
    starts.push_back(static_cast<double>(now) / kS);
    burst_start = now;
    burst_end = std::min(end, now + BurstSchedule::kBurstNs);
  }
  return starts;
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

// No GPU read: the first burst 8 s after sampling started.
TEST(BurstSchedule, WithoutAGpuTheFirstComesAfter8s) {
  BurstSchedule s(kS);
  EXPECT_FALSE(s.due(8 * kS, false, false));
  EXPECT_TRUE(s.due(9 * kS, false, false));
}

}  // namespace
}  // namespace chokepoint::live
