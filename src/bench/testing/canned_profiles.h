// Canned raw module output for the host-side tests: what libchokepoint_bench.so returns
// on the H200 test machine (figures from docs/FORMATS.md "H200 figures" where it has them).
#pragma once

namespace chokepoint::bench::testing {

inline constexpr const char* kH200Raw = R"json({
  "schema": "chokepoint.profile/1", "mode": "full", "cuda_driver": 13000, "cuda_runtime": 13000,
  "cublaslt": 130001, "cublaslt_note": "libcublasLt.so.13", "seconds": 24.7,
  "gpus": [{
    "index": 0, "name": "NVIDIA H200", "uuid": "GPU-5f0c3e6a-0000-1111-2222-333344445555",
    "pci_bus_id": "0000:00:05.0", "cc": [9, 0], "sms": 132, "memory_bytes": 150754820096,
    "free_memory_bytes": 150100000000, "l2_bytes": 62914560, "sm_clock_max_mhz": 1980,
    "mem_clock_max_mhz": 3201, "mem_bus_width_bits": 6144, "ecc": 1, "async_engines": 3,
    "sm_clock_under_load_mhz": 1980.0,
    "pcie": {"speed_under_load": "32.0 GT/s PCIe", "width_under_load": "16"},
    "results": [
      {"key": "h2d_pageable", "unit": "GB/s", "status": "ok", "value": 6.5, "samples": [6.4, 6.5, 6.6], "note": "", "seconds": 0.6},
      {"key": "d2h_pageable", "unit": "GB/s", "status": "ok", "value": 10.9, "samples": [10.9], "note": "", "seconds": 0.4},
      {"key": "h2d_pinned", "unit": "GB/s", "status": "ok", "value": 53.1, "samples": [53.1], "note": "4 x 1024 MiB", "seconds": 0.7},
      {"key": "d2h_pinned", "unit": "GB/s", "status": "ok", "value": 55.3, "samples": [55.3], "note": "", "seconds": 0.7},
      {"key": "bidir_pinned", "unit": "GB/s", "status": "ok", "value": 99.0, "samples": [99.0], "note": "", "seconds": 1.0},
      {"key": "d2d_memcpy", "unit": "GB/s", "status": "ok", "value": 2124.0, "samples": [2124.0], "note": "", "seconds": 0.2},
      {"key": "dram_read", "unit": "GB/s", "status": "ok", "value": 4150.0, "samples": [4150.0], "note": "", "seconds": 0.2},
      {"key": "dram_write", "unit": "GB/s", "status": "ok", "value": 4000.0, "samples": [4000.0], "note": "", "seconds": 0.2},
      {"key": "dram_copy", "unit": "GB/s", "status": "ok", "value": 2080.0, "samples": [2080.0], "note": "", "seconds": 0.2},
      {"key": "l2_read", "unit": "GB/s", "status": "ok", "value": 10375.0, "samples": [10375.0], "note": "", "seconds": 0.1},
      {"key": "launch_latency", "unit": "us", "status": "ok", "value": 4.9, "samples": [4.9], "note": "", "seconds": 0.5},
      {"key": "graph_node_latency", "unit": "us", "status": "ok", "value": 0.5, "samples": [0.5], "note": "", "seconds": 0.1},
      {"key": "launch_sync_roundtrip", "unit": "us", "status": "ok", "value": 10.3, "samples": [10.3], "note": "", "seconds": 0.2},
      {"key": "ffma_fp32", "unit": "TFLOP/s", "status": "ok", "value": 64.0, "samples": [64.0], "note": "", "seconds": 0.3},
      {"key": "gemm_fp32", "unit": "TFLOP/s", "status": "ok", "value": 50.0, "samples": [50.0], "note": "", "seconds": 1.0},
      {"key": "gemm_tf32", "unit": "TFLOP/s", "status": "ok", "value": 380.0, "samples": [380.0], "note": "", "seconds": 1.0},
      {"key": "gemm_fp16", "unit": "TFLOP/s", "status": "ok", "value": 780.0, "samples": [780.0], "note": "", "seconds": 1.0},
      {"key": "gemm_bf16", "unit": "TFLOP/s", "status": "ok", "value": 790.0, "samples": [790.0], "note": "algo 66", "seconds": 1.0},
      {"key": "gemm_fp8", "unit": "TFLOP/s", "status": "waived", "value": null, "samples": [], "note": "cuBLASLt offers no fp8 algorithm for a 8192x8192x8192 TN multiply on this GPU", "seconds": 0.1},
      {"key": "gemm_int8", "unit": "TOP/s", "status": "failed", "value": null, "samples": [], "note": "cublasLtMatmul (int8): CUBLAS_STATUS_EXECUTION_FAILED", "seconds": 0.1}
    ]
  }]
})json";

}  // namespace chokepoint::bench::testing
