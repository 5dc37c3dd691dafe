#include "analyses/breakdown.h"

#include <gtest/gtest.h>

#include "analyses/analysis.h"
#include "analyses/testing/timeline_builder.h"

namespace chokepoint::analyses {
namespace {

using testing::TimelineBuilder;
using timeline::CpuCategory;

TimeNs idle(const Analysis& a, IdleCause c) { return a.total().idle_of(c); }
constexpr TimeNs us(double v) { return static_cast<TimeNs>(v * 1000); }

TEST(Breakdown, DataLoaderGapIsInput) {
  TimelineBuilder b;
  b.step(1, 0, 1000);
  b.cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 800, CpuCategory::kUserAnnotation);
  b.kernel("gemm_kernel", 810, 815, 185);
  const Analysis a = analyze(b.finish());
  EXPECT_EQ(a.total().duration, us(1000));
  EXPECT_EQ(a.total().busy, us(185));
  EXPECT_EQ(idle(a, IdleCause::kInput), us(800));
  EXPECT_EQ(idle(a, IdleCause::kHostWork), us(10));       // 800..810: Python between
  EXPECT_EQ(idle(a, IdleCause::kLaunchOverhead), us(5));  // 810..815: launch latency
  EXPECT_EQ(a.total().idle_total() + a.total().busy, a.total().duration);
}

TEST(Breakdown, HostWorkAfterSyncIsSync) {
  TimelineBuilder b;
  b.step(1, 0, 1000);
  b.kernel("gemm_kernel", 0, 5, 495);
  b.runtime("cudaStreamSynchronize", 10, 495);  // returns at 505, the GPU ran dry at 500
  b.kernel("gemm_kernel", 900, 905, 95);        // host work 505..900, then launch
  const Analysis a = analyze(b.finish());
  EXPECT_EQ(idle(a, IdleCause::kSync), us(405));
  EXPECT_EQ(idle(a, IdleCause::kLaunchOverhead), us(5));  // leading gap 0..5
  EXPECT_EQ(a.total().sync_relabelled, 0);
  EXPECT_EQ(a.total().host_critical, us(505));  // 1000 us span minus 495 us blocked
}

TEST(Breakdown, SyncIdleBeyondHostWorkIsRelabelled) {
  TimelineBuilder b;
  b.step(1, 0, 2100);
  b.kernel("gemm_kernel", 0, 5, 495);
  b.runtime("cudaStreamSynchronize", 10, 495);
  b.kernel("gemm_kernel", 2000, 2005, 95);  // 1.5 ms of host work after the sync
  const Analysis a = analyze(b.finish());
  // Without the sync the step still needs the host's 1605 us; the GPU side alone 595 us.
  EXPECT_EQ(a.total().host_critical, us(1605));
  EXPECT_EQ(a.total().sync_relabelled, us(1010));
  EXPECT_EQ(idle(a, IdleCause::kSync), us(1505 - 1010));
  EXPECT_EQ(idle(a, IdleCause::kHostWork), us(1010));
}

TEST(Breakdown, BackToBackLaunchesAreLaunchOverhead) {
  TimelineBuilder b;
  b.step(1, 0, 600);
  for (int i = 0; i < 100; ++i) {
    const double t = 6.0 * i;
    b.cpu("aten::add", t, 6, CpuCategory::kOp);
    b.kernel("vectorized_elementwise_kernel", t + 0.5, t + 5.5, 0.5, 4, "cudaLaunchKernel", 4.5);
  }
  const Analysis a = analyze(b.finish());
  EXPECT_EQ(a.total().busy, us(50));
  EXPECT_EQ(idle(a, IdleCause::kLaunchOverhead), us(600 - 50));
  EXPECT_EQ(a.api.kernels, 100);
  EXPECT_EQ(a.api.short_kernels, 100);
}

TEST(Breakdown, QueuedOpThatWaitsIsGpuWait) {
  TimelineBuilder b;
  b.step(1, 0, 400);
  b.kernel("gemm_kernel", 0, 5, 45);
  b.kernel("gemm_kernel", 10, 200, 100);  // launched at 10, starts at 200: a dependency
  const Analysis a = analyze(b.finish());
  EXPECT_EQ(idle(a, IdleCause::kGpuWait), us(150));
  EXPECT_EQ(idle(a, IdleCause::kNothingQueued), us(100));  // 300..400, nothing after
}

TEST(Breakdown, FreeWhileIdleIsAllocator) {
  TimelineBuilder b;
  b.step(1, 0, 500);
  b.kernel("gemm_kernel", 0, 5, 95);
  b.runtime("cudaFree", 50, 250);  // blocks until the GPU is idle, then frees
  b.kernel("gemm_kernel", 310, 315, 185);
  const Analysis a = analyze(b.finish());
  // 100..300 in cudaFree, which covered the moment the GPU ran dry: 300..315 too.
  EXPECT_EQ(idle(a, IdleCause::kAllocator), us(215));
}

TEST(Breakdown, StepWindowExtendsToLastLaunchedGpuOp) {
  TimelineBuilder b;
  b.step(1, 0, 100);    // CPU runs ahead: launches at 10 and 20
  b.step(2, 100, 100);  // launches at 110
  b.kernel("gemm_kernel", 10, 15, 500);
  b.kernel("gemm_kernel", 20, 515, 500);    // step 1 GPU work ends at 1015
  b.kernel("gemm_kernel", 110, 1015, 500);  // step 2 GPU work ends at 1515
  const Analysis a = analyze(b.finish());
  ASSERT_EQ(a.windows.steps.size(), 2u);
  EXPECT_EQ(a.windows.steps[0].end, us(1015));
  EXPECT_EQ(a.windows.steps[1].start, us(1015));
  EXPECT_EQ(a.windows.steps[1].end, us(1515));
  EXPECT_EQ(a.breakdown.steps[1].busy, us(500));
  EXPECT_EQ(a.breakdown.steps[1].idle_total(), 0);
}

TEST(Breakdown, FirstWindowSkipsWorkQueuedBeforeTheTrace) {
  TimelineBuilder b;
  b.step(1, 0, 50);
  b.kernel("gemm_kernel", -1, 100, 400);  // launched before profiling began
  b.kernel("gemm_kernel", 10, 500, 300);
  const Analysis a = analyze(b.finish());
  ASSERT_EQ(a.steps(), 1);
  EXPECT_EQ(a.windows.steps[0].start, us(500));
  EXPECT_EQ(a.total().duration, us(300));
  EXPECT_EQ(a.total().idle_total(), 0);
}

TEST(Breakdown, NoStepsMeansWholeTrace) {
  TimelineBuilder b;
  b.kernel("gemm_kernel", 0, 5, 95);
  b.kernel("gemm_kernel", 100, 105, 95);
  const Analysis a = analyze(b.finish());
  EXPECT_TRUE(a.windows.whole_trace);
  ASSERT_EQ(a.steps(), 1);
  EXPECT_EQ(a.total().duration, us(200));
  EXPECT_EQ(a.total().busy, us(190));
}

}  // namespace
}  // namespace chokepoint::analyses
