#include "tracer/window.h"

#include <gtest/gtest.h>

namespace chokepoint::tracer {
namespace {

constexpr int64_t kSec = 1'000'000'000;
using A = WindowAction;

WindowSpec spec(std::string_view text) {
  std::string error;
  auto s = parse_window_spec(text, &error);
  EXPECT_TRUE(s.has_value()) << error;
  return s.value_or(WindowSpec{});
}

TEST(WindowSpec, ParsesAndFormatsBack) {
  for (const char* t : {"steps=10:20", "steps=0:5,every=60000000000", "at=30000000000,for=5000000000",
                        "at=0,for=1,every=2", "on-demand", ""}) {
    EXPECT_EQ(format_window_spec(spec(t)), t);
  }
  EXPECT_EQ(spec("steps=3:4").warmup_steps, 3);
  EXPECT_EQ(spec("steps=3:4").steps, 4);
}

TEST(WindowSpec, RefusesMalformedAndMixed) {
  std::string error;
  for (const char* t : {"steps=10", "steps=a:2", "steps=1:0", "steps=-1:2", "at=5", "for=0", "every=5",
                        "steps=1:2,at=1,for=2", "on-demand,steps=1:2", "at=1,for=5,every=5", "bogus", "every"}) {
    EXPECT_FALSE(parse_window_spec(t, &error).has_value()) << t;
    EXPECT_FALSE(error.empty()) << t;
  }
}

TEST(WindowPlan, WholeJobOpensAtStartAndNeverCloses) {
  WindowPlan p(spec(""), 100);
  EXPECT_EQ(p.next_time(), 100);
  EXPECT_EQ(p.on_time(100), A::kOpen);
  EXPECT_EQ(p.on_time(1'000 * kSec), A::kNone);
  EXPECT_TRUE(p.open());
  EXPECT_FALSE(p.wants_steps());
}

// NVTX steps: the window opens at the start of step W (its range's start record is not in
// the trace) and closes at the start of step W+C+1, so it holds C whole steps.
TEST(WindowPlan, StepsWindowHoldsExactlyItsStepsWhole) {
  WindowPlan p(spec("steps=3:3"), 0);
  EXPECT_TRUE(p.wants_steps());
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 1), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 2), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 3), A::kOpen);  // step 3 starts: its range is cut
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 4), A::kNone);  // steps 4, 5, 6 are whole
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 5), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 6), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 7), A::kClose);  // step 7 starts
  EXPECT_EQ(p.window_steps(), 4);
  p.on_flushed();
  for (int i = 8; i < 50; ++i) EXPECT_EQ(p.on_step(StepSignal::kNvtx, i), A::kNone);
  EXPECT_FALSE(p.wants_steps());  // once, not repeated
  EXPECT_EQ(p.windows(), 1);
  EXPECT_EQ(p.next_time(), INT64_MAX);
}

TEST(WindowPlan, NoWarmUpOpensAtTheFirstStep) {
  WindowPlan p(spec("steps=0:1"), 0);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 1), A::kOpen);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 2), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 3), A::kClose);
}

TEST(WindowPlan, NvtxStepsReplaceSynchronizationsAndRestartTheCount) {
  WindowPlan p(spec("steps=3:1"), 0);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 1), A::kNone);  // setup syncs counted as steps ...
  EXPECT_EQ(p.on_step(StepSignal::kSync, 2), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 3), A::kNone);  // ... until NVTX steps appear: step 1
  EXPECT_EQ(p.on_step(StepSignal::kSync, 4), A::kNone);  // ignored from now on
  EXPECT_EQ(p.on_step(StepSignal::kSync, 5), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 6), A::kNone);  // step 2
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 7), A::kOpen);  // step 3
  EXPECT_EQ(p.on_step(StepSignal::kSync, 8), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 9), A::kNone);    // step 4, whole
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 10), A::kClose);  // step 5
}

// A synchronization ends a step as it returns: the next step is whole, no lead step.
TEST(WindowPlan, SynchronizationsAreStepsWithoutNvtx) {
  WindowPlan p(spec("steps=1:2"), 0);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 1), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 2), A::kOpen);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 3), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 4), A::kClose);
}

TEST(WindowPlan, StepsWindowRepeatsEveryIntervalAfterItsFileIsDone) {
  WindowPlan p(spec("steps=0:2,every=10"), 0);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 1), A::kOpen);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 2), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 3), A::kClose);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 11), A::kNone);  // due, but the file is not done
  p.on_flushed();
  EXPECT_EQ(p.on_step(StepSignal::kSync, 12), A::kOpen);
  EXPECT_EQ(p.windows(), 2);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 13), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kSync, 14), A::kClose);
  p.on_flushed();
  EXPECT_EQ(p.on_step(StepSignal::kSync, 21), A::kNone);  // 12 + 10 not reached
  EXPECT_EQ(p.on_step(StepSignal::kSync, 22), A::kOpen);
  EXPECT_TRUE(p.wants_steps());
}

TEST(WindowPlan, TimedWindowOpensAndClosesOnSchedule) {
  WindowPlan p(spec("at=5,for=3,every=10"), 100);
  EXPECT_FALSE(p.wants_steps());
  EXPECT_EQ(p.next_time(), 105);
  EXPECT_EQ(p.on_time(104), A::kNone);
  EXPECT_EQ(p.on_time(106), A::kOpen);  // a late wake-up: still closes at 108
  EXPECT_EQ(p.next_time(), 108);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 107), A::kNone);  // steps do not close it
  EXPECT_EQ(p.on_time(108), A::kClose);
  p.on_flushed();
  EXPECT_EQ(p.next_time(), 115);
  EXPECT_EQ(p.on_time(115), A::kOpen);
  EXPECT_EQ(p.on_time(118), A::kClose);
  p.on_flushed();
  EXPECT_EQ(p.on_time(140), A::kNone);  // 125 and 135 missed whole: skipped
  EXPECT_EQ(p.next_time(), 145);
  EXPECT_EQ(p.windows(), 2);
}

TEST(WindowPlan, TimedWindowOnceDoesNotRepeat) {
  WindowPlan p(spec("at=0,for=5"), 0);
  EXPECT_EQ(p.on_time(0), A::kOpen);
  EXPECT_EQ(p.on_time(5), A::kClose);
  p.on_flushed();
  EXPECT_EQ(p.on_time(100), A::kNone);
  EXPECT_EQ(p.next_time(), INT64_MAX);
}

TEST(WindowPlan, OnDemandIsIdleUntilAskedThenRefusesASecondRequest) {
  WindowPlan p(spec("on-demand"), 0);
  EXPECT_FALSE(p.wants_steps());
  EXPECT_EQ(p.on_time(10), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 11), A::kNone);
  EXPECT_EQ(p.request(2, 0, 12), "");
  EXPECT_TRUE(p.wants_steps());
  EXPECT_NE(p.request(0, kSec, 12).find("already in progress"), std::string::npos);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 13), A::kOpen);  // the lead step
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 14), A::kNone);
  EXPECT_NE(p.request(1, 0, 14).find("already in progress"), std::string::npos);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 15), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 16), A::kClose);
  EXPECT_NE(p.request(1, 0, 16).find("still being written"), std::string::npos);
  p.on_flushed();
  EXPECT_FALSE(p.wants_steps());
  EXPECT_EQ(p.request(0, 5, 20), "");
  EXPECT_EQ(p.next_time(), 0);  // now
  EXPECT_EQ(p.on_time(20), A::kOpen);
  EXPECT_EQ(p.next_time(), 25);
  EXPECT_EQ(p.on_time(25), A::kClose);
  EXPECT_EQ(p.windows(), 2);
  EXPECT_NE(p.request(0, 0, 30).find("still being written"), std::string::npos);
  p.on_flushed();
  EXPECT_NE(p.request(0, 0, 30).find("number of steps or a duration"), std::string::npos);
}

// On demand the step callbacks start with the request: the first step start seen may be
// the synchronization that ends a step. The window then opens there, and once NVTX steps
// show up they are counted from the first, whole one (H200: a 20-step request took 19).
TEST(WindowPlan, OnDemandWindowOpenedByASyncCountsNvtxStepsFromTheFirst) {
  WindowPlan p(spec("on-demand"), 0);
  EXPECT_EQ(p.request(3, 0, 1), "");
  EXPECT_EQ(p.on_step(StepSignal::kSync, 2), A::kOpen);  // step 218 ends
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 3), A::kNone);  // step 219: first
  EXPECT_EQ(p.on_step(StepSignal::kSync, 4), A::kNone);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 5), A::kNone);  // 220
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 6), A::kNone);  // 221
  EXPECT_EQ(p.window_steps(), 3);
  EXPECT_EQ(p.on_step(StepSignal::kNvtx, 7), A::kClose);  // 222 starts: 219-221 whole
}

TEST(WindowPlan, RequestsAreRefusedWhenNotOnDemand) {
  WindowPlan p(spec("steps=1:1"), 0);
  EXPECT_NE(p.request(5, 0, 0).find("--trace=on-demand"), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::tracer
