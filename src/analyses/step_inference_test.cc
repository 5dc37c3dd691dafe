#include "analyses/step_inference.h"

#include <gtest/gtest.h>

#include <vector>

#include "analyses/steps.h"
#include "analyses/testing/timeline_builder.h"

namespace chokepoint::analyses {
namespace {

using testing::TimelineBuilder;

// A loop of `iters` iterations: `layers` x (gemm, relu) then a loss kernel, each op
// launched 10 us after the previous, then `pause_us` of host work before the next
// iteration.
void loop(TimelineBuilder& b, int iters, int layers, double pause_us, bool with_loss = true, int slow_iter = -1,
          int slow_count = 1) {
  double t = 0;
  for (int i = 0; i < iters; ++i) {
    if (i >= slow_iter && i < slow_iter + slow_count) t += 20000;  // e.g. a profiler starting, cuDNN autotuning
    for (int l = 0; l < layers; ++l) {
      b.kernel("gemm", t, t + 5, 4);
      t += 10;
      b.kernel("relu", t, t + 5, 4);
      t += 10;
    }
    if (with_loss) {
      b.kernel("loss", t, t + 5, 4);
      t += 10;
    }
    t += pause_us;
  }
}

TEST(StepInference, PeriodFromAKernelIssuedOncePerIteration) {
  TimelineBuilder b;
  loop(b, 20, 4, 200);
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  ASSERT_TRUE(w.inferred) << w.method;
  EXPECT_NE(w.method.find("9 ops per step"), std::string::npos) << w.method;
  ASSERT_EQ(w.steps.size(), 20u);
  // Each iteration: 9 launches 10 us apart, then 200 us of host work.
  for (size_t i = 1; i + 1 < w.steps.size(); ++i) EXPECT_EQ(w.steps[i].duration(), TimelineBuilder::us(290)) << i;
  EXPECT_EQ(w.steps[3].start, TimelineBuilder::us(3 * 290));  // the first op's launch
}

// Identical layers and nothing else: the names repeat every 2 ops; the host's pause
// between iterations says where one ends.
TEST(StepInference, IterationOfIdenticalLayersFromThePause) {
  TimelineBuilder b;
  loop(b, 12, 6, 100, false);
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  ASSERT_TRUE(w.inferred) << w.method;
  EXPECT_NE(w.method.find("12 ops per step"), std::string::npos) << w.method;
  EXPECT_EQ(w.steps.size(), 12u);
}

// A slow iteration at the start (a profiler starting, autotuning) is warm-up, left out;
// the same one later in the run is a real stall and stays.
TEST(StepInference, SlowWarmUpCycleLeftOut) {
  TimelineBuilder b;
  loop(b, 20, 4, 200, true, 1);
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  ASSERT_TRUE(w.inferred) << w.method;
  EXPECT_EQ(w.steps.size(), 19u);
  EXPECT_NE(w.method.find("1 warm-up cycle left out"), std::string::npos) << w.method;
  for (const auto& s : w.steps) EXPECT_LT(s.duration(), TimelineBuilder::us(1000));

  TimelineBuilder late;
  loop(late, 20, 4, 200, true, 15);
  const auto& tl2 = late.finish();
  const auto w2 = compute_step_windows(tl2, build_index(tl2));
  EXPECT_EQ(w2.steps.size(), 20u) << w2.method;
}

// cuDNN's benchmark mode autotunes each new shape: cnn_channels_last's first 7 of 32
// cycles were slow, past the first tenth. The whole leading run is warm-up while it is
// less than half of the cycles.
TEST(StepInference, LeadingRunOfSlowCyclesLeftOutPastTheFirstTenth) {
  TimelineBuilder b;
  loop(b, 30, 4, 200, true, 1, 6);
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  ASSERT_TRUE(w.inferred) << w.method;
  EXPECT_NE(w.method.find("6 warm-up cycles left out"), std::string::npos) << w.method;
  for (const auto& s : w.steps) EXPECT_LT(s.duration(), TimelineBuilder::us(1000));

  // Most cycles slow: that is how the run goes, not its warm-up; only the first tenth's go.
  TimelineBuilder slow;
  loop(slow, 10, 4, 200, true, 1, 6);
  const auto& tl2 = slow.finish();
  const auto w2 = compute_step_windows(tl2, build_index(tl2));
  EXPECT_GE(w2.steps.size(), 8u) << w2.method;
}

// The warm-up is a prefix: a quick cycle between two slow ones goes with them, or the steps
// kept would have a hole that the replay counts as step time.
TEST(StepInference, AQuickCycleAmongSlowWarmUpCyclesGoesWithThem) {
  TimelineBuilder b;
  double t = 0;
  std::vector<double> begins;
  for (int i = 0; i < 40; ++i) {
    if (i == 1 || i == 3) t += 20000;  // cycles 0 and 2 end 20 ms late, cycle 1 does not
    begins.push_back(t);
    for (int l = 0; l < 4; ++l) {
      b.kernel("gemm", t, t + 5, 4);
      t += 10;
      b.kernel("relu", t, t + 5, 4);
      t += 10;
    }
    b.kernel("loss", t, t + 5, 4);
    t += 10 + 200;
  }
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  ASSERT_TRUE(w.inferred) << w.method;
  EXPECT_NE(w.method.find("3 warm-up cycles left out"), std::string::npos) << w.method;
  ASSERT_EQ(w.steps.size(), 37u);
  EXPECT_EQ(w.steps.front().cpu_start, TimelineBuilder::us(begins[3]));
  for (const auto& s : w.steps) EXPECT_LT(s.duration(), TimelineBuilder::us(1000));
}

// Variable sequence lengths pick other GEMM kernels, and one length adds a split-K
// reduction after each GEMM: no period repeats, but every iteration begins with the same
// op after the host's pause (the allocator's sync, the next batch): empty_cache's
// transformer under `run --trace`, docs/VALIDATION.md.
TEST(StepInference, StepsOfVariableShapesFromTheOpThatBeginsThem) {
  TimelineBuilder b;
  const char* gemms[] = {"gemm_128x64", "gemm_256x128", "gemm_64x64_splitk"};
  double t = 0;
  unsigned lcg = 7;
  std::vector<double> begins;
  for (int i = 0; i < 24; ++i) {
    lcg = lcg * 1103515245u + 12345u;
    const int shape = static_cast<int>((lcg >> 16) % 3);
    begins.push_back(t);
    b.kernel("randint", t, t + 5, 2);
    t += 10;
    for (int l = 0; l < 4; ++l) {
      b.kernel(gemms[shape], t, t + 5, 4);
      t += 10;
      if (shape == 2) {
        b.kernel("splitk_reduce", t, t + 5, 2);
        t += 10;
      }
      b.kernel("relu", t, t + 5, 4);
      t += 10;
    }
    b.kernel("loss", t, t + 5, 4);
    t += 10 + 2000;
  }
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  ASSERT_TRUE(w.inferred) << w.method;
  EXPECT_NE(w.method.find("the op that begins each iteration"), std::string::npos) << w.method;
  ASSERT_EQ(w.steps.size(), 23u) << w.method;  // whole cycles: where the last one ends is not seen
  for (size_t i = 0; i < w.steps.size(); ++i) EXPECT_EQ(w.steps[i].cpu_start, TimelineBuilder::us(begins[i])) << i;
}

TEST(StepInference, NothingRepeatsMeansOneWindow) {
  TimelineBuilder b;
  for (int i = 0; i < 30; ++i) b.kernel(std::string("k").append(std::to_string(i)), i * 10.0, i * 10.0 + 5, 4);
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  EXPECT_FALSE(w.inferred);
  EXPECT_TRUE(w.whole_trace);
  EXPECT_TRUE(infer_steps(tl, build_index(tl)).empty());
}

// Two whole cycles are not enough to call it a loop.
TEST(StepInference, NeedsThreeCycles) {
  TimelineBuilder b;
  loop(b, 2, 4, 200);
  const auto& tl = b.finish();
  EXPECT_TRUE(infer_steps(tl, build_index(tl)).empty());
}

// Annotations win over inference.
TEST(StepInference, AnnotatedStepsAreNotInferred) {
  TimelineBuilder b;
  b.step(1, 0, 1000);
  for (int i = 0; i < 10; ++i) {
    b.kernel("gemm", i * 100.0, i * 100.0 + 5, 4);
    b.kernel("loss", i * 100.0 + 10, i * 100.0 + 15, 4);
  }
  const auto& tl = b.finish();
  const auto w = compute_step_windows(tl, build_index(tl));
  EXPECT_FALSE(w.inferred);
  EXPECT_EQ(w.method, "ProfilerStep#N annotations");
}

}  // namespace
}  // namespace chokepoint::analyses
