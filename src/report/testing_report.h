// A hand-made, realistic report for the reporters' output tests: an input-bound training
// job on an H200, with two findings (one without a speedup estimate, one evidence value
// NaN), kernels with long C++ names and two import stats. Header-only so that it lives
// beside the tests without entering the library.
#pragma once

#include <limits>

#include "report/report.h"

namespace chokepoint::report::testing {

inline Report input_bound_report() {
  using rules::Category;
  Report r;
  r.tool_version = "0.1.0";
  r.inputs.push_back({"tests/data/kineto/input_bound.json.gz", "kineto", 12'913'408, 184'220});

  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  h200.num_sms = 132;
  h200.memory_bytes = 150'754'820'096;
  h200.compute_capability = "9.0";
  h200.ceilings.source = "published:NVIDIA H200";
  h200.ceilings.hbm_gbps = 4800.0;
  h200.ceilings.pcie_gbps = 55.0;
  h200.ceilings.fp32_tflops = 67.0;
  h200.ceilings.tf32_tflops = 494.7;
  h200.ceilings.bf16_tflops = 989.4;
  h200.ceilings.fp8_tflops = 1978.9;
  r.devices.push_back(h200);

  r.window.steps = 8;
  r.window.step_source = "ProfilerStep#N annotations";
  r.window.step_time_ms = {412.34567, 405.1, 470.2, 398.7, 481.9};
  r.window.analyzed_ms = 3298.76;
  r.window.step_numbers = {2, 3, 4, 5, 6, 7, 8, 9};

  Breakdown& b = r.breakdown;
  b.gpu_busy_pct = 24.1;
  b.gpu_idle_pct = 75.9;
  b.idle_by_cause = {
      {"input", 63.04567, 259.7}, {"launch_overhead", 7.9, 32.6}, {"sync", 3.1, 12.8}, {"unattributed", 1.85, 7.6}};
  b.busy_by_class = {{"gemm", 14.2, 58.5}, {"elementwise", 6.3, 26.0}, {"memcpy", 2.4, 9.9}, {"reduction", 1.2, 4.9}};
  b.category_costs = {{"input", 63.0, 259.7}, {"compute", 14.2, 58.5}, {"host", 7.9, 32.6},
                      {"memory", 6.3, 26.0},  {"sync", 3.1, 12.8},     {"transfer", 2.4, 9.9}};

  r.verdict.bound = Category::kInput;
  r.verdict.confidence = 0.93;
  r.verdict.summary = "The GPU sits idle 63% of every step waiting for the DataLoader to hand over the next batch.";

  rules::Finding stall;
  stall.id = "input-pipeline-stall";
  stall.category = Category::kInput;
  stall.severity = Severity::kCritical;
  stall.title = "The GPU waits for the next batch 63% of every step";
  stall.detail =
      "Each step spends 259.7 ms in DataLoader.__next__ with 2 workers while the "
      "GPU work of a step takes 99.4 ms.";
  stall.evidence = {{"gpu_idle_waiting_for_input", 63.04567, 10.0, "%"},
                    {"dataloader_wait_per_step", 259.7, std::nullopt, "ms"},
                    {"dataloader_workers", 2, std::nullopt, ""}};
  stall.recommendation =
      "Load batches in parallel and ahead of time: DataLoader(dataset, batch_size=64, "
      "num_workers=8, pin_memory=True, persistent_workers=True, prefetch_factor=4). If the "
      "workers are CPU-bound, move decoding and augmentation to the GPU or cache "
      "preprocessed samples.";
  stall.estimated_speedup = 2.7149;
  stall.time_share_pct = 63.04567;
  stall.remedies = {"dataloader-workers"};
  stall.estimate_remedy = "dataloader-workers";
  r.findings.push_back(stall);

  rules::RemedyAdvice workers;
  workers.id = "dataloader-workers";
  workers.title = "Load batches in DataLoader workers";
  workers.change = "DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True)";
  workers.estimated_speedup = 2.7149;
  workers.estimate_from = "trace what-if";
  workers.step_ms_before = 412.3;
  workers.step_ms_after = 151.9;
  workers.what_changes = "the 259.7 ms per step the loop waited in DataLoader.__next__ shrinks to 0.15 ms";
  workers.assumptions = {"One batch costs a worker 519 ms (2 workers were all busy).", "Second assumption."};
  workers.findings = {"input-pipeline-stall"};
  r.remedies.push_back(workers);

  rules::Finding sync;
  sync.id = "host-sync";
  sync.category = Category::kSync;
  sync.severity = Severity::kWarning;
  sync.title = "`.item()` forces a host-device synchronization every step";
  sync.detail =
      "3 cudaStreamSynchronize calls per step wait 12.8 ms in total for queued "
      "kernels such as std::vector<float> | copies.";
  sync.evidence = {{"sync_wait_per_step", 12.8, 5.0, "ms"},
                   {"syncs_per_step", 3, 1.0, ""},
                   {"achieved_copy_rate", std::numeric_limits<double>::quiet_NaN(), std::nullopt, "GB/s"}};
  sync.recommendation =
      "Keep the loss on the GPU: accumulate `running_loss += loss.detach()` "
      "and call `.item()` once per logging interval.";
  sync.time_share_pct = 3.1;
  r.findings.push_back(sync);

  r.top_kernels = {
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_"
       "execute_segment_k_off_kernel__5x_cublas",
       "gemm", "tf32", true, 96, 401.3, 50.5},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3>)",
       "elementwise", "fp32", std::nullopt, 640, 208.1, 26.2},
      {"Memcpy HtoD (Pageable -> Device)", "memcpy", "", std::nullopt, 16, 79.2, 10.0},
      {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>("
       "cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)",
       "gemm", "fp32", false, 32, 62.0, 7.8},
  };

  r.import_stats = {
      {"kineto_truncated", Severity::kWarning,
       "The trace ended inside an event; the events after the cut were dropped.", 1},
      {"kineto_unknown_category", Severity::kInfo, "Events of an unknown category were skipped.", 37},
  };
  r.analysis_seconds = 1.4231;
  return r;
}

}  // namespace chokepoint::report::testing
