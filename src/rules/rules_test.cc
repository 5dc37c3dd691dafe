// One test per rule on a synthetic timeline built to trigger it, with the speedup the
// what-if must give worked out by hand; plus a healthy timeline that triggers none.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyses/testing/timeline_builder.h"
#include "rules/diagnose.h"

namespace chokepoint::rules {
namespace {

using testing::TimelineBuilder;
using timeline::CopyKind;
using timeline::CpuCategory;
using timeline::MemKind;

const Finding* find(const Diagnosis& d, const std::string& id) {
  auto it = std::find_if(d.findings.begin(), d.findings.end(), [&](const Finding& f) { return f.id == id; });
  return it == d.findings.end() ? nullptr : &*it;
}

struct Diagnosed {
  explicit Diagnosed(TimelineBuilder& b) : tl(b.finish()), a(analyses::analyze(tl)), d(diagnose(tl, a)) {}
  timeline::Timeline& tl;
  analyses::Analysis a;
  Diagnosis d;
};

TEST(Rules, InputPipelineStall) {
  TimelineBuilder b;
  for (int s = 0; s < 3; ++s) {
    const double t = 1000.0 * s;
    b.step(s, t, 1000);
    b.cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, 800, CpuCategory::kUserAnnotation);
    b.kernel("nvjet_sm90_tst_128x256", t + 810, t + 815, 185);
  }
  Diagnosed r(b);
  const Finding* f = find(r.d, "input-pipeline-stall");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, Category::kInput);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(f->time_share_pct, 80.0, 1e-9);
  // dataloader-workers' replay: each 800 us wait becomes a 150 us hand-over of a ready
  // batch; step 2 launches at 163 + (997 - 650) us, its kernel ends 350 us after step 1's:
  // 350 us per step. Loading in the main process took 800 us a batch: 3 workers keep up.
  EXPECT_NEAR(*f->estimated_speedup, 1000.0 / 350.0, 1e-9);
  EXPECT_NE(f->recommendation.find("num_workers="), std::string::npos);
  EXPECT_EQ(r.d.bound, Category::kInput);
}

TEST(Rules, LaunchOverhead) {
  TimelineBuilder b;
  b.step(1, 0, 600);
  for (int i = 0; i < 100; ++i) {
    const double t = 6.0 * i;
    b.cpu("aten::add", t, 6);
    b.kernel("vectorized_elementwise_kernel", t + 0.5, t + 5.5, 0.5, 4, "cudaLaunchKernel", 4.5);
  }
  Diagnosed r(b);
  const Finding* f = find(r.d, "launch-overhead");
  ASSERT_NE(f, nullptr);
  // cuda-graphs' replay: one graph launch (5 us) at 0.5 us, the first kernel ready 5 us
  // later (the recorded launch latency), then one graph node every 0.5 us: the 100th
  // kernel ends at 5.5 + 100 * 0.5 = 55.5 us instead of 600.
  EXPECT_NEAR(*f->estimated_speedup, 600.0 / 55.5, 1e-9);
  ASSERT_FALSE(r.d.remedies.empty());
  EXPECT_EQ(r.d.remedies.front().id, "cuda-graphs");
  EXPECT_EQ(r.d.bound, Category::kHost);
}

TEST(Rules, HostSync) {
  TimelineBuilder b;
  b.step(1, 0, 1000);
  b.kernel("nvjet_sm90_tst", 0, 5, 495);
  b.runtime("cudaStreamSynchronize", 10, 495);
  b.kernel("nvjet_sm90_tst", 900, 905, 95);
  Diagnosed r(b);
  const Finding* f = find(r.d, "host-sync");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->time_share_pct, 40.5, 1e-9);
  EXPECT_NEAR(*f->estimated_speedup, 1000.0 / 595.0, 1e-9);
  EXPECT_NE(f->detail.find("cudaStreamSynchronize"), std::string::npos);
}

TEST(Rules, HostWork) {  // host-bound: the CPU span is the step
  TimelineBuilder b;
  b.step(1, 0, 1000);
  b.kernel("nvjet_sm90_tst", 0, 5, 95);
  b.kernel("nvjet_sm90_tst", 900, 905, 95);  // 100..900: Python, no op, no sync
  Diagnosed r(b);
  const Finding* f = find(r.d, "host-work");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->time_share_pct, 80.0, 1e-9);
  EXPECT_EQ(find(r.d, "host-sync"), nullptr);
  EXPECT_EQ(r.d.bound, Category::kHost);
}

TEST(Rules, AllocatorChurn) {
  TimelineBuilder b;
  for (int s = 0; s < 2; ++s) {
    const double t = 1000.0 * s;
    b.step(s, t, 1000);
    b.kernel("nvjet_sm90_tst", t, t + 5, 95);
    b.runtime("cudaFree", t + 50, 250);
    b.runtime("cudaMalloc", t + 300, 10);
    b.kernel("nvjet_sm90_tst", t + 310, t + 315, 685);
  }
  Diagnosed r(b);
  const Finding* f = find(r.d, "allocator-churn");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(r.a.api.steady_windows, 1);  // the first step warms the cache up
  EXPECT_EQ(r.a.api.steady_allocs, 1);
  EXPECT_EQ(r.a.api.steady_frees, 1);
  // no-empty-cache's replay: the second step's cudaFree/cudaMalloc cost nothing and wait
  // for nothing, so its last kernel starts when the first ends (1100 us) and ends at
  // 1785 us; the first step's allocations are warm-up and stay.
  EXPECT_NEAR(*f->estimated_speedup, 2000.0 / 1785.0, 1e-9);
}

TEST(Rules, PageableMemcpy) {
  TimelineBuilder b;
  b.step(1, 0, 20000);
  // The call returns when the staged copy is nearly done (as a pageable copy does).
  b.memcpy(CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice, 100'000'000, 0, 10, 15000, 15005);
  b.kernel("nvjet_sm90_tst", 15010, 15020, 4980);
  Diagnosed r(b);
  const Finding* f = find(r.d, "pageable-memcpy");
  ASSERT_NE(f, nullptr);
  // pinned-copies' replay: 100 MB at the H200's pinned ceiling (63 GB/s * 0.85) plus 2 us,
  // from 10 us; the call no longer waits, so the kernel is launched at once and runs
  // right after the copy: 1879.4 + 4980 us against the 20005 us the baseline replays.
  const double pinned_us = 100e6 / (63.0 * 0.85) / 1e3 + 2.0;
  EXPECT_NEAR(*f->estimated_speedup, 20005.0 / (10.0 + pinned_us + 4980.0), 1e-3);
  // transfer-bound names the same remedy and carries the same estimate.
  const Finding* tb = find(r.d, "transfer-bound");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(tb->remedies, std::vector<std::string>{"pinned-copies"});
  EXPECT_DOUBLE_EQ(*tb->estimated_speedup, *f->estimated_speedup);
  EXPECT_EQ(r.d.bound, Category::kTransfer);
}

TEST(Rules, TransferBoundPinned) {
  TimelineBuilder b;
  b.step(1, 0, 12000);
  b.memcpy(CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice, 500'000'000, 0, 10, 10000);
  b.kernel("nvjet_sm90_tst", 10010, 10020, 1980);
  Diagnosed r(b);
  EXPECT_EQ(find(r.d, "pageable-memcpy"), nullptr);
  const Finding* f = find(r.d, "transfer-bound");
  ASSERT_NE(f, nullptr);
  // Overlapped, the step costs max(rest = 2 ms, copies = 10 ms).
  EXPECT_NEAR(*f->estimated_speedup, 1.2, 1e-3);
  // 50 GB/s is above 80% of the 53.55 GB/s ceiling: the link is saturated.
  EXPECT_NE(f->recommendation.find("saturated"), std::string::npos);
}

// GPU-bound steps: the CPU span is short, the GPU work it launched defines the window.
TEST(Rules, NoTensorCores) {
  TimelineBuilder b;
  b.step(1, 0, 20);
  b.op_with_inputs("aten::mm", 0, 10, 7, {{"float", {8192, 4096}}, {"float", {4096, 4096}}});
  b.kernel("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4", 1, 5, 900, 1024,
           "cudaLaunchKernel", 3, 7);
  Diagnosed r(b);
  const Finding* f = find(r.d, "no-tensor-cores");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(r.a.kernels.matrix_fp32_no_tc_ns, 900'000);
  // autocast-bf16's replay (the better of its two remedies): the GEMM's FLOPs at what a
  // large bf16 GEMM reaches (989 TFLOP/s published x 0.69), from 5 us.
  const double flops = 2.0 * 8192 * 4096 * 4096;
  EXPECT_NEAR(*f->estimated_speedup, 905.0 / (5.0 + flops / (989e12 * 0.69) * 1e6), 1e-3);
  EXPECT_EQ(f->remedies, (std::vector<std::string>{"autocast-bf16", "tf32"}));
  EXPECT_EQ(r.d.bound, Category::kCompute);
  ASSERT_FALSE(r.a.roofline.rows.empty());
  EXPECT_DOUBLE_EQ(r.a.roofline.rows[0].flops, 2.0 * 8192 * 4096 * 4096);
}

TEST(Rules, MemoryBoundElementwise) {
  TimelineBuilder b;
  b.step(1, 0, 20);
  for (int i = 0; i < 10; ++i) {
    b.kernel("void at::native::vectorized_elementwise_kernel<4>", i, 10 + 100.0 * i, 100);
  }
  Diagnosed r(b);
  const Finding* f = find(r.d, "memory-bound-elementwise");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(r.a.fusion.chains, 1);
  EXPECT_NEAR(*f->estimated_speedup, 1010.0 / (1010.0 - 900.0), 1e-9);
  EXPECT_EQ(r.d.bound, Category::kMemory);
}

TEST(Rules, LowOccupancy) {
  TimelineBuilder b;
  b.step(1, 0, 20);
  b.kernel("scale_rows_kernel", 0, 10, 1000, 16);
  Diagnosed r(b);
  const Finding* f = find(r.d, "low-occupancy");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(*f->estimated_speedup, 1010.0 / (1010.0 - 1000.0 * (1.0 - 16.0 / 132.0)), 1e-4);
}

TEST(Rules, HealthyBf16ComputeHasNoFindings) {
  TimelineBuilder b;
  b.step(1, 0, 20);
  b.op_with_inputs("aten::mm", 0, 10, 3, {{"c10::BFloat16", {8192, 8192}}, {"c10::BFloat16", {8192, 8192}}});
  b.kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 1, 2, 997, 1024, "cuLaunchKernelEx", 3, 3);
  Diagnosed r(b);
  EXPECT_TRUE(r.d.findings.empty());
  EXPECT_EQ(r.d.bound, Category::kCompute);
  EXPECT_GT(r.d.confidence, 0.99);
  EXPECT_NE(r.d.summary.find("no remedy outside the kernels themselves"), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::rules
