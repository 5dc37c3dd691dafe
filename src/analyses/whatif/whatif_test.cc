// The replay and its graph on small timelines whose answers can be worked out by hand
// (times in us; TimelineBuilder launches with a 3 us call unless told otherwise).
#include <gtest/gtest.h>

#include "analyses/analysis.h"
#include "analyses/roofline.h"
#include "analyses/testing/timeline_builder.h"
#include "analyses/whatif/whatif.h"

namespace chokepoint::analyses::whatif {
namespace {

using testing::TimelineBuilder;
using timeline::TimeNs;

constexpr TimeNs us(double v) { return static_cast<TimeNs>(v * 1000); }

struct Built {
  explicit Built(TimelineBuilder& b) : tl(b.finish()), a(analyze(tl)), g(build_step_graph(tl, a.index, a.windows)) {}
  timeline::Timeline& tl;
  Analysis a;
  StepGraph g;

  // The GpuNode of the op named `name`, -1 none.
  int32_t node(std::string_view name) const {
    for (size_t k = 0; k < g.gpu.size(); ++k) {
      if (tl.strings.view(tl.gpu_ops.name[g.gpu[k].row]) == name) return static_cast<int32_t>(k);
    }
    return -1;
  }
};

// Host-bound: a launch every 10 us, each kernel 2 us; one step.
TEST(Replay, BaselineReproducesALaunchBoundStep) {
  TimelineBuilder b;
  b.step(1, 0, 100);
  for (int i = 0; i < 10; ++i) b.kernel("k", 10.0 * i, 10.0 * i + 5, 2);
  Built x(b);
  ASSERT_EQ(x.g.host.size(), 10u);
  ASSERT_EQ(x.g.gpu.size(), 10u);
  EXPECT_EQ(x.g.launch_latency, us(5));
  EXPECT_EQ(x.g.host[1].gap, us(7));  // 10 us apart, 3 us calls
  const ReplayResult r = replay(x.g, Plan::baseline(x.g));
  EXPECT_EQ(r.total, us(100));  // the last kernel ends at 97, the CPU span at 100
  EXPECT_EQ(r.gpu_busy, us(20));
}

// A synchronize that waited for a long kernel returns when it ends; the next launch
// follows the host time after it. With the sync gone, the host runs on.
TEST(Replay, ASyncWaitsForItsKernelAndDeferringItOverlapsTheHost) {
  TimelineBuilder b;
  b.step(1, 0, 1000);
  b.kernel("gemm", 0, 5, 495);                  // 5 .. 500
  b.runtime("cudaStreamSynchronize", 10, 491);  // 10 .. 501: waited for it
  b.kernel("gemm", 900, 905, 95);               // 399 us of Python after the sync
  Built x(b);
  ASSERT_EQ(x.g.host.size(), 3u);
  EXPECT_EQ(x.g.host[1].waits_for, 0);
  EXPECT_EQ(x.g.host[1].after_wait, us(1));
  const ReplayResult base = replay(x.g, Plan::baseline(x.g));
  EXPECT_EQ(base.total, us(1000));
  // Half the kernel: the sync returns at 252.5 + 1, the rest follows.
  Plan p = Plan::baseline(x.g);
  p.node_dur[0] = us(247.5);
  EXPECT_EQ(replay(x.g, p).host_end, us(253.5 + 399 + 3 + 97));
  p = Plan::baseline(x.g);
  p.waits[1] = 0;
  const ReplayResult deferred = replay(x.g, p);
  EXPECT_EQ(deferred.total, us(595));  // the second kernel queues behind the first: 500 + 95
}

// An op that started later than its launch and its stream allowed waited for an op of
// another stream (an event); the replay keeps that order when the first op grows.
TEST(Replay, CrossStreamDependenciesAreKept) {
  TimelineBuilder b;
  b.step(1, 0, 300);
  b.kernel("producer", 0, 5, 100, 1024, "cudaLaunchKernel", 3, -1, 7);    // stream 7: 5 .. 105
  b.kernel("consumer", 10, 105, 50, 1024, "cudaLaunchKernel", 3, -1, 9);  // stream 9: waited until 105
  Built x(b);
  ASSERT_EQ(x.g.gpu.size(), 2u);
  ASSERT_NE(x.g.gpu[0].lane, x.g.gpu[1].lane);
  const int consumer = x.tl.strings.view(x.tl.gpu_ops.name[x.g.gpu[0].row]) == "consumer" ? 0 : 1;
  EXPECT_EQ(x.g.gpu[consumer].dep, 1 - consumer);
  EXPECT_EQ(x.g.launch_latency, us(5));  // the waiting consumer's 95 us is not launch latency
  Plan p = Plan::baseline(x.g);
  p.node_dur[1 - consumer] = us(200);  // the producer now ends at 205
  const ReplayResult r = replay(x.g, p);
  EXPECT_EQ(r.total, us(300));     // the CPU span still ends last
  EXPECT_EQ(r.gpu_busy, us(250));  // 5 .. 255: the consumer waited for the producer
}

// cudaEventRecord after the producer's launch and cudaStreamWaitEvent before the
// consumer's: the consumer was launched after the producer ended, so its start shows no
// wait, but the events still order the two once launches cost nothing (cuda-graphs).
TEST(Replay, EventRecordAndWaitOrderStreamsTheLaunchTimesHid) {
  TimelineBuilder b;
  b.step(1, 0, 300);
  b.kernel("producer", 0, 5, 50, 1024, "cudaLaunchKernel", 3, -1, 7);  // stream 7: 5 .. 55
  b.runtime("cudaEventRecord", 4, 1);
  b.runtime("cudaStreamWaitEvent", 100, 1);
  b.kernel("consumer", 110, 115, 50, 1024, "cudaLaunchKernel", 3, -1, 9);  // stream 9: 115 .. 165
  Built x(b);
  ASSERT_EQ(x.g.gpu.size(), 2u);
  const int consumer = x.tl.strings.view(x.tl.gpu_ops.name[x.g.gpu[0].row]) == "consumer" ? 0 : 1;
  EXPECT_EQ(x.g.gpu[consumer].dep, 1 - consumer);
  EXPECT_EQ(x.g.gpu[1 - consumer].dep, -1);
  Plan p = Plan::baseline(x.g);
  for (auto& gap : p.gap) gap = 0;  // the host time between the calls goes
  const ReplayResult r = replay(x.g, p);
  EXPECT_GE(r.gpu_busy, us(100));  // still one after the other, not side by side
}

// The same order from a CUPTI trace, which has no event calls but a synchronization record
// for each wait naming the waiting stream: the wait takes the op launched last before it on
// another stream. Two waits of stream 9 in a row (a join) take the last ops of two streams;
// the op of stream 9 after them waits for the later-ending one.
TEST(Replay, WaitRecordsOrderStreamsWithoutEventCalls) {
  TimelineBuilder b;
  b.step(1, 0, 400);
  b.kernel("producer", 0, 5, 50, 1024, "cudaLaunchKernel", 3, -1, 7);  // stream 7: 5 .. 55
  b.kernel("side", 55, 60, 80, 1024, "cudaLaunchKernel", 3, -1, 8);    // stream 8: 60 .. 140
  b.stream_wait(100, 9);
  b.stream_wait(101, 9);
  b.kernel("consumer", 160, 165, 50, 1024, "cudaLaunchKernel", 3, -1, 9);  // stream 9: 165 .. 215
  b.stream_wait(170, 7);  // stream 7 waits for the consumer, but nothing on 7 is launched after
  Built x(b);
  ASSERT_EQ(x.g.gpu.size(), 3u);
  EXPECT_EQ(x.g.gpu[x.node("consumer")].dep, x.node("side"));  // the later-ending of the two
  EXPECT_EQ(x.g.gpu[x.node("side")].dep, -1);
  EXPECT_EQ(x.g.gpu[x.node("producer")].dep, -1);
  Plan p = Plan::baseline(x.g);
  for (auto& gap : p.gap) gap = 0;
  const ReplayResult r = replay(x.g, p);
  EXPECT_GE(r.gpu_busy, us(130));  // side then consumer, one after the other
}

// A wait whose event record the tracer kept (CUPTI's CUDA_EVENT activity) takes the op
// that record marks, not the one the launch order suggests: stream 9 waited on an event
// recorded on stream 7 after the producer, though "side" on stream 8 was launched later.
TEST(Replay, AWaitWithItsEventRecordTakesTheOpTheRecordMarks) {
  TimelineBuilder b;
  b.step(1, 0, 400);
  const int64_t producer = b.kernel("producer", 0, 5, 50, 1024, "cudaLaunchKernel", 3, -1, 7);  // 5 .. 55
  b.kernel("side", 55, 60, 80, 1024, "cudaLaunchKernel", 3, -1, 8);                             // stream 8: 60 .. 140
  b.stream_wait(100, 9, 1, /*event_stream=*/7, /*event_correlation=*/producer + 1);
  b.kernel("consumer", 160, 165, 50, 1024, "cudaLaunchKernel", 3, -1, 9);  // stream 9: 165 .. 215
  Built x(b);
  ASSERT_EQ(x.g.gpu.size(), 3u);
  EXPECT_EQ(x.g.gpu[x.node("consumer")].dep, x.node("producer"));
  Plan p = Plan::baseline(x.g);
  for (auto& gap : p.gap) gap = 0;
  const ReplayResult r = replay(x.g, p);
  EXPECT_LT(r.gpu_busy, us(130));  // the consumer runs beside "side", after the producer
}

// What a remedy's replay changed is said per step, its counts as its times: two steps of
// two FP32 GEMMs each read "2 FP32 matrix kernels per step", not the 4 of the trace.
TEST(Replay, ARemedysCountsArePerStepAsItsTimes) {
  TimelineBuilder b;
  for (int s = 0; s < 2; ++s) {
    const double t = 1000.0 * s;
    b.step(s, t, 1000);
    for (int i = 0; i < 2; ++i) {
      b.kernel("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma", t + 10.0 * i,
               t + 20 + 400.0 * i, 400);
    }
  }
  Built x(b);
  const Estimate* tf32 = estimate_of(x.a, Remedy::kTf32);
  ASSERT_NE(tf32, nullptr);
  EXPECT_EQ(tf32->change.rfind("2 FP32 matrix kernels per step take ", 0), 0u) << tf32->change;
  EXPECT_NE(tf32->change.find("instead of 0.80 ms"), std::string::npos) << tf32->change;
}

// GPU work queued before the trace (no launch in it) is ready from the start: a faster
// kernel lets everything behind it move up.
TEST(Replay, WorkQueuedBeforeTheTraceStartsAtTheOrigin) {
  TimelineBuilder b;
  b.step(1, 0, 10);
  b.kernel("old", -1, 0, 400);   // launched before the trace
  b.kernel("new", 1, 400, 100);  // queued behind it
  Built x(b);
  ASSERT_EQ(x.g.gpu.size(), 2u);
  EXPECT_TRUE(x.g.gpu[0].backlog);
  Plan p = Plan::baseline(x.g);
  EXPECT_EQ(replay(x.g, p).total, us(500));
  p.node_dur[0] = us(100);
  EXPECT_EQ(replay(x.g, p).total, us(200));
}

// The profiler's cost comes off every gap (per ATen op) and call, never below a quarter.
TEST(RecordingCost, TakesTheProfilerCostOutOfGapsAndCalls) {
  TimelineBuilder b;
  b.step(1, 0, 200);
  for (int i = 0; i < 3; ++i) b.cpu("aten::add", 20.0 + 2 * i, 1);
  b.kernel("k", 40, 45, 5, 1024, "cudaLaunchKernel", 10);
  b.cpu("aten::mul", 60, 1);
  b.kernel("k", 62, 70, 5, 1024, "cudaLaunchKernel", 10);
  Built x(b);
  RecordingCost c;
  c.recorder = "torch.profiler";
  c.per_op = us(6);
  c.per_call = us(2);
  const Plan p = without_recording_cost(x.g, Plan::baseline(x.g), c);
  EXPECT_EQ(p.gap[0], us(40 - 18));  // three ops: 40 - 18
  EXPECT_EQ(p.dur[0], us(8));
  EXPECT_EQ(p.gap[1], us(6));  // one op: 12 - 6
  EXPECT_EQ(p.dur[1], us(8));
  RecordingCost heavy = c;
  heavy.per_op = us(30);
  EXPECT_EQ(without_recording_cost(x.g, Plan::baseline(x.g), heavy).gap[1], us(3));  // a quarter of 12 stays
}

// A call too short to hold its own recording cost gives three quarters of its time; the
// rest of the cost comes out of the gap before it (the tracer's work around the call).
TEST(RecordingCost, WhatACallCannotHoldComesOutOfTheGapBeforeIt) {
  TimelineBuilder b;
  b.step(1, 0, 200);
  b.kernel("k", 40, 45, 5, 1024, "cudaLaunchKernel", 4);  // a 4 us launch after a 40 us gap
  Built x(b);
  RecordingCost c;
  c.recorder = "chokepoint tracer";
  c.per_call = us(5);
  const Plan p = without_recording_cost(x.g, Plan::baseline(x.g), c);
  EXPECT_EQ(p.dur[0], us(1));       // 3 of the 5 us: a quarter of 4 stays
  EXPECT_EQ(p.gap[0], us(40 - 2));  // the other 2 us
  const Plan hi = without_recording_cost(x.g, Plan::baseline(x.g), with_high_tracer_cost(c));
  EXPECT_EQ(hi.gap[0], us(40 - 10));  // 13 us a call: 3 from the call, 10 from the gap
  RecordingCost profiler = c;
  profiler.recorder = "torch.profiler";
  EXPECT_EQ(with_high_tracer_cost(profiler).per_call, us(5));  // only the tracer's varies
  RecordingCost window = c;
  window.window = true;  // inside a window it measured 3.0-6.4 us a call
  EXPECT_EQ(with_high_tracer_cost(window).per_call, us(6.5));
}

// A CUPTI trace is a window's when every CUPTI file of it is (run --trace-steps, --trace-time).
TEST(RecordingCost, ATraceWindowIsKnownFromItsSources) {
  timeline::Timeline tl;
  tl.sources.emplace_back().format = "cupti";
  tl.sources.back().trace_window = true;
  EXPECT_TRUE(recording_cost_for(tl).window);
  EXPECT_EQ(recording_cost_for(tl).recorder, "chokepoint tracer");
  tl.sources.emplace_back().format = "cupti";  // the process traced whole beside it
  EXPECT_FALSE(recording_cost_for(tl).window);
}

// One graph per run of launches: a sync ends it, and so does a step boundary.
TEST(CudaGraphs, OneGraphPerRunBetweenSyncsAndSteps) {
  TimelineBuilder b;
  for (int s = 0; s < 2; ++s) {
    const double t = 200.0 * s;
    b.step(s, t, 200);
    for (int i = 0; i < 4; ++i) b.kernel("k", t + 10.0 * i, t + 10.0 * i + 5, 1);
    b.runtime("cudaDeviceSynchronize", t + 45, 2);
    for (int i = 0; i < 4; ++i) b.kernel("k", t + 100 + 10.0 * i, t + 100 + 10.0 * i + 5, 1);
  }
  Built x(b);
  const Context c = make_context(x.tl, x.a.index, x.g, x.a.ceilings);
  const auto e = estimate_cuda_graphs(c);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->change.find("8 launches per step go into 2.0 graph(s) per step"), std::string::npos) << e->change;
}

TEST(ChannelsLast, OperandsOfAnElementwiseKernelFromItsName) {
  EXPECT_EQ(elementwise_operands("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<"
                                 "c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<"
                                 "c10::BFloat16>, std::array<char*, 3ul>)"),
            3);
  EXPECT_EQ(
      elementwise_operands("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                           "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
      1);
  EXPECT_EQ(elementwise_operands("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda, "
                                 "std::array<char*, 2ul>, 4>"),
            0);  // not the vectorized kernel: not known to stream at the memory rate
  EXPECT_EQ(elementwise_operands("void at::native::vectorized_elementwise_kernel<8, F>"), 0);
}

// A CUPTI trace has kernel names only: each NCHW batch-norm kernel is sized by the
// elementwise kernel on the same activation next to it (forward: the ReLU after it, 2
// operands; backward: the ReLU backward before it, 3 operands), 10 us per tensor here.
TEST(ChannelsLast, WithoutShapesBatchNormIsSizedByItsElementwiseNeighbour) {
  TimelineBuilder b;
  b.step(1, 0, 700);
  const char* bf16 = "c10::BFloat16";
  b.kernel("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc", 0, 5, 20);
  b.kernel(std::string("void at::native::batch_norm_collect_statistics_kernel<at::native::Var, ") + bf16 + ">", 5, 25,
           300);
  b.kernel(std::string("void at::native::batch_norm_transform_input_kernel<") + bf16 + ", float, float, true, int>", 10,
           325, 60);
  b.kernel("void at::native::vectorized_elementwise_kernel<8, clamp, std::array<char*, 2ul> >", 15, 385, 20);
  b.kernel("void at::native::vectorized_elementwise_kernel<8, threshold, std::array<char*, 3ul> >", 20, 405, 30);
  b.kernel(std::string("void at::native::batch_norm_backward_kernel<") + bf16 + ", float, float, int>", 25, 435, 250);
  b.runtime("cudaDeviceSynchronize", 30, 656);  // returns at 686, 1 us after the last kernel
  Built x(b);
  const Context c = make_context(x.tl, x.a.index, x.g, x.a.ceilings);
  const auto e = estimate_channels_last(c);
  ASSERT_TRUE(e.has_value());
  // 300 + 60 + 250 us become 10 + 10 + 30 (x: 1 tensor, y: 1, dy x dx: 3).
  EXPECT_NE(e->change.find("3 NCHW batch-norm/pooling kernels take 0.05 ms instead of 0.61 ms"), std::string::npos)
      << e->change;
  // The GPU-bound step: 5 + 20 + 50 + 20 + 30 us of kernels, the sync's 1 us after the
  // last and the 14 us of host time after it to the step's end.
  EXPECT_NEAR(e->step_ms_after, 0.140, 1e-9);
}

TEST(SteadyStep, DropsTheFirstWindowFromThreeOn) {
  ReplayResult r;
  r.total = 100;
  r.step_end = {40, 60, 80, 100};
  EXPECT_DOUBLE_EQ(steady_step_ns(r), 20.0);
  r.step_end = {60, 100};
  EXPECT_DOUBLE_EQ(steady_step_ns(r), 50.0);
}

TEST(SkinnyGemm, NamesAndTilesOfMatrixVectorKernels) {
  EXPECT_TRUE(is_gemv_kernel("void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false>"));
  EXPECT_TRUE(is_gemv_kernel("nvjet_sm90_hsh_256x8_64x6_4x1_v_bz_splitK_TNT"));
  EXPECT_FALSE(is_gemv_kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"));
  EXPECT_FALSE(is_gemv_kernel("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma"));
  EXPECT_TRUE(is_gemv_kernel("cutlass_80_tensorop_bf16_s16816gemm_bf16_128x16_64x3_nn_align8"));
  EXPECT_FALSE(is_gemv_kernel("void at::native::vectorized_elementwise_kernel<4>"));
}

}  // namespace
}  // namespace chokepoint::analyses::whatif
