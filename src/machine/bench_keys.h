// The keys of `chokepoint bench`'s testcases: the ids a saved profile stores measurements
// under (machine/profile.h). The CUDA testcases (bench/cuda/*.cu) name themselves with
// these, and everything that reads a measurement back (the judgement, the expectations,
// the causes, the ceilings a profile replaces) looks it up by the same constant, so a
// renamed testcase cannot silently stop feeding a ceiling. Plain C++17 (nvcc compiles the
// testcases as C++17).
#pragma once

namespace chokepoint::machine::bench_keys {

// Host <-> device copies (GB/s).
inline constexpr const char kH2dPageable[] = "h2d_pageable";
inline constexpr const char kD2hPageable[] = "d2h_pageable";
inline constexpr const char kH2dPinned[] = "h2d_pinned";
inline constexpr const char kD2hPinned[] = "d2h_pinned";
inline constexpr const char kBidirPinned[] = "bidir_pinned";
// Device memory (GB/s).
inline constexpr const char kD2dMemcpy[] = "d2d_memcpy";
inline constexpr const char kDramRead[] = "dram_read";
inline constexpr const char kDramWrite[] = "dram_write";
inline constexpr const char kDramCopy[] = "dram_copy";
inline constexpr const char kL2Read[] = "l2_read";
// Launches (us).
inline constexpr const char kLaunchLatency[] = "launch_latency";
inline constexpr const char kGraphNodeLatency[] = "graph_node_latency";
inline constexpr const char kLaunchSyncRoundtrip[] = "launch_sync_roundtrip";
// Compute (TFLOP/s; INT8 TOP/s). A GEMM's key is kGemmPrefix + its precision name.
inline constexpr const char kFfmaFp32[] = "ffma_fp32";
inline constexpr const char kGemmPrefix[] = "gemm_";
inline constexpr const char kGemmFp32[] = "gemm_fp32";
inline constexpr const char kGemmTf32[] = "gemm_tf32";
inline constexpr const char kGemmFp16[] = "gemm_fp16";
inline constexpr const char kGemmBf16[] = "gemm_bf16";
inline constexpr const char kGemmFp8[] = "gemm_fp8";
inline constexpr const char kGemmInt8[] = "gemm_int8";

}  // namespace chokepoint::machine::bench_keys
