// Golden test of `chokepoint run --trace`: a CUDA program of known content
// (tests/data/tracer/known_counts.cu: 100 kernels, 10 pageable host->device copies,
// 5 stream synchronizations) traced on the H200 by tests/data/tracer/gpu_check.sh. The
// importer must find exactly that, and analyze of the recording must use the trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "importers/importer.h"
#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"
#include "timeline/model.h"

namespace {

using namespace chokepoint;
const std::string kRec = std::string(CHOKEPOINT_TEST_DATA) + "/tracer/known_counts.rec";

// Runtime calls whose name starts with `prefix`.
int calls_named(const timeline::Timeline& tl, std::string_view prefix) {
  int n = 0;
  for (size_t i = 0; i < tl.runtime_calls.size(); ++i)
    n += tl.strings.view(tl.runtime_calls.name[i]).rfind(prefix, 0) == 0;
  return n;
}

// Each kernel is the program's one kernel, launched with its one shape.
void check_kernel(const timeline::Timeline& tl, size_t i) {
  EXPECT_EQ(tl.strings.view(tl.gpu_ops.name[i]), "scale(float*, int)");
  EXPECT_EQ(tl.gpu_ops.grid[i][0], (1 << 20) / 256);
  EXPECT_EQ(tl.gpu_ops.block[i][0], 256);
}

// Each copy is 4 MiB from pageable host memory to the device.
void check_copy(const timeline::GpuOps& g, size_t i) {
  EXPECT_EQ(g.copy_kind[i], timeline::CopyKind::kHtoD);
  EXPECT_EQ(g.src_kind[i], timeline::MemKind::kPageable);
  EXPECT_EQ(g.dst_kind[i], timeline::MemKind::kDevice);
  EXPECT_EQ(g.bytes[i], (1 << 20) * 4);
}

// The 100 kernels and 10 pageable host->device copies, each as the program issued it.
void check_gpu_ops(const timeline::Timeline& tl) {
  const auto& g = tl.gpu_ops;
  int kernels = 0, copies = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] == timeline::GpuOpKind::kKernel) {
      ++kernels;
      check_kernel(tl, i);
    } else if (g.kind[i] == timeline::GpuOpKind::kMemcpy) {
      ++copies;
      check_copy(g, i);
    }
  }
  EXPECT_EQ(kernels, 100);
  EXPECT_EQ(copies, 10);
}

// The stream synchronizations, on the thread that called cudaStreamSynchronize.
void check_sync_events(const timeline::Timeline& tl) {
  int32_t sync_call_tid = 0;
  for (size_t i = 0; i < tl.runtime_calls.size(); ++i) {
    if (tl.strings.view(tl.runtime_calls.name[i]).rfind("cudaStreamSynchronize", 0) == 0) {
      sync_call_tid = tl.runtime_calls.tid[i];
    }
  }
  for (size_t i = 0; i < tl.sync_events.size(); ++i) {
    EXPECT_EQ(tl.sync_events.kind[i], timeline::SyncKind::kStreamSync);
    EXPECT_EQ(tl.sync_events.pid[i], 1012);
    // The blocked thread, from the cudaStreamSynchronize call with the same correlation.
    // (This recording predates cuptiSetThreadIdType(SYSTEM): its ids are CUPTI's default,
    // pthread_self() cut to 32 bits, so only their agreement is checked.)
    EXPECT_EQ(tl.sync_events.tid[i], sync_call_tid);
  }
}

TEST(TracerGolden, ExactCountsOfAKnownProgram) {
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(importers::import_paths({kRec + "/trace-1012.cptrace"}, tl, stats).ok());
  tl.finalize();
  check_gpu_ops(tl);
  ASSERT_EQ(tl.sync_events.size(), 5u);
  check_sync_events(tl);
  EXPECT_EQ(calls_named(tl, "cudaLaunchKernel"), 100);
  ASSERT_EQ(tl.devices.size(), 1u);
  EXPECT_EQ(tl.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(tl.devices[0].num_sms, 132);
  EXPECT_EQ(stats.count("cupti_truncated"), 0);
  EXPECT_EQ(stats.count("cupti_dropped_records"), 0);
}

TEST(TracerGolden, AnalyzeOfATracedRecordingUsesTheTrace) {
  auto r = chokepoint::golden::analyze_fixture({kRec});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& rep = r.value();
  ASSERT_TRUE(rep.live.has_value()) << "the samples keep their section";
  ASSERT_EQ(rep.inputs.size(), 2u);
  EXPECT_EQ(rep.inputs[1].format, "cupti");
  EXPECT_EQ(rep.devices.at(0).num_sms, 132);
  ASSERT_FALSE(rep.top_kernels.empty());
  EXPECT_EQ(rep.top_kernels[0].calls, 100);
  // 10 copies of 4 MiB from pageable memory dominate the program's GPU time.
  EXPECT_EQ(rules::category_name(rep.verdict.bound), std::string("transfer"));
  EXPECT_TRUE(std::any_of(rep.findings.begin(), rep.findings.end(),
                          [](const auto& f) { return f.id == "pageable-memcpy" && f.estimated_speedup; }));
}

}  // namespace

namespace {

using namespace chokepoint;

// The same program with 4 NVTX ranges named "step" around 25 launches each
// (`known_counts 100 10 5 4`), traced after cuptiSetThreadIdType(SYSTEM) and the NVTX
// hand-over to CUPTI: the ranges arrive as steps, and thread ids are Linux tids (the
// single-threaded program's main thread: its pid).
// Every step range and runtime call of the recording is on thread `pid` of process `pid`.
void check_ids_are_linux_tids(const timeline::Timeline& tl, int32_t pid) {
  for (size_t i = 0; i < tl.cpu_ranges.size(); ++i) {
    EXPECT_EQ(tl.strings.view(tl.cpu_ranges.name[i]), "step");
    EXPECT_EQ(tl.cpu_ranges.pid[i], pid);
    EXPECT_EQ(tl.cpu_ranges.tid[i], pid);
  }
  for (size_t i = 0; i < tl.runtime_calls.size(); ++i) {
    EXPECT_EQ(tl.runtime_calls.pid[i], pid);
    EXPECT_EQ(tl.runtime_calls.tid[i], pid);
  }
}

// Kernel launches inside step s.
int launches_in_step(const timeline::Timeline& tl, size_t s) {
  int launches = 0;
  for (size_t i = 0; i < tl.runtime_calls.size(); ++i) {
    const bool launch = tl.strings.view(tl.runtime_calls.name[i]).rfind("cudaLaunchKernel", 0) == 0;
    launches += launch && tl.runtime_calls.start[i] >= tl.steps.start[s] && tl.runtime_calls.end[i] <= tl.steps.end[s];
  }
  return launches;
}

// Analyze of the recording takes its 4 steps from the NVTX ranges.
void check_analyze_uses_nvtx_steps(const std::string& rec) {
  auto r = chokepoint::golden::analyze_fixture({rec});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().window.steps, 4);
  EXPECT_EQ(r.value().window.step_source, "NVTX step ranges");
}

TEST(TracerGolden, NvtxRangesAreStepsAndThreadIdsAreLinuxTids) {
  const std::string rec = std::string(CHOKEPOINT_TEST_DATA) + "/tracer/known_counts_nvtx.rec";
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(importers::import_paths({rec + "/trace-482.cptrace"}, tl, stats).ok());
  ASSERT_EQ(tl.cpu_ranges.size(), 4u);
  ASSERT_EQ(tl.steps.size(), 4u);
  check_ids_are_linux_tids(tl, 482);
  // 25 launches inside each range.
  for (size_t s = 0; s < tl.steps.size(); ++s) EXPECT_EQ(launches_in_step(tl, s), 25) << "step " << s;
  EXPECT_EQ(stats.count("cupti_nvtx_unmatched"), 0);
  EXPECT_EQ(stats.count("cupti_nvtx_unclosed"), 0);

  check_analyze_uses_nvtx_steps(rec);
}

}  // namespace

namespace {

using namespace chokepoint;

// DDP on the 2-GPU machine (tests/data/tracer/README.md): one trace file per rank, each
// its own source with its own pid, NVTX steps and NCCL all-reduce kernels.
TEST(TracerGolden, DdpRanksOneTracePerProcess) {
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(importers::import_paths({std::string(CHOKEPOINT_TEST_DATA) + "/tracer/ddp"}, tl, stats).ok());
  ASSERT_EQ(tl.sources.size(), 2u);
  std::map<int32_t, int> steps_of_pid;
  for (size_t i = 0; i < tl.steps.size(); ++i) ++steps_of_pid[tl.steps.pid[i]];
  EXPECT_EQ(steps_of_pid, (std::map<int32_t, int>{{653, 149}, {654, 149}}));
  std::map<int32_t, int> nccl_of_source;
  for (size_t i = 0; i < tl.gpu_ops.size(); ++i) {
    if (tl.strings.view(tl.gpu_ops.name[i]).find("ncclDevKernel_AllReduce") != std::string_view::npos) {
      ++nccl_of_source[tl.devices[static_cast<size_t>(tl.gpu_ops.device[i])].source_index];
    }
  }
  ASSERT_EQ(nccl_of_source.size(), 2u);
  EXPECT_EQ(nccl_of_source[0], nccl_of_source[1]);  // every all-reduce ran on both ranks
  EXPECT_GT(nccl_of_source[0], 149);
  EXPECT_EQ(stats.count("cupti_dropped_records"), 0);
}

}  // namespace

namespace {

using namespace chokepoint;

// A trace window (`run --trace-steps 600:50`, tests/data/tracer/gpu_windows.sh; window_loop.py
// --nvtx: each step an NVTX range "step N" around a 120-kernel forward and a sync): the
// window opens one step early (step 600, whose range start CUPTI recorded before the
// library saw it) and closes as step 651 starts, so steps 601-650 are whole, with the API
// calls that launched them.
TEST(TracerGolden, AStepsWindowHoldsItsStepsWholeWithTheirLaunches) {
  const std::string file = std::string(CHOKEPOINT_TEST_DATA) + "/tracer/windows/trace-519-w1.cptrace.gz";
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(importers::import_paths({file}, tl, stats).ok());
  ASSERT_EQ(tl.steps.size(), 50u);
  EXPECT_EQ(*std::min_element(tl.steps.number.begin(), tl.steps.number.end()), 601);
  EXPECT_EQ(*std::max_element(tl.steps.number.begin(), tl.steps.number.end()), 650);
  EXPECT_EQ(tl.gpu_ops.size(), 51u * 120u);  // the 50 steps and the lead step's tail
  EXPECT_EQ(calls_named(tl, "cudaLaunchKernel"), 51 * 120);
  EXPECT_EQ(stats.count("cupti_window"), 1);
  EXPECT_EQ(stats.count("cupti_window_cut"), 0);
  EXPECT_EQ(stats.count("cupti_nvtx_unmatched"), 1);  // the lead step's end
  EXPECT_EQ(stats.count("cupti_nvtx_unclosed"), 1);   // step 651's start

  auto r = chokepoint::golden::analyze_fixture({file});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().window.steps, 50);
  EXPECT_EQ(r.value().window.step_source, "NVTX step ranges");
  EXPECT_EQ(r.value().devices.at(0).num_sms, 132);  // the device record is in the window's file
}

}  // namespace
