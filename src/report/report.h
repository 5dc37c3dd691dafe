// The report: everything a reporter renders, already computed. Built by pipeline/ from
// the analyses and the findings; reporters only format it (one file per format).
// The JSON reporter maps it onto the contract in DESIGN.md ("chokepoint.report/1").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rules/finding.h"
#include "timeline/import_stats.h"

namespace chokepoint::report {

inline constexpr const char* kSchema = "chokepoint.report/1";

struct InputInfo {
  std::string path;
  std::string format;       // "kineto"
  uint64_t bytes = 0;       // size on disk
  int64_t events = 0;       // events imported into the model
};

// The ceilings the analyses divided by, and where they came from.
struct Ceilings {
  std::string source;       // "published:NVIDIA H200" | "profile:<file>" | "unknown"
  std::optional<double> hbm_gbps;          // device memory bandwidth, GB/s
  std::optional<double> pcie_gbps;         // host<->device per direction, achievable, GB/s
  std::optional<double> fp32_tflops;       // non-tensor FP32
  std::optional<double> tf32_tflops;       // tensor cores
  std::optional<double> bf16_tflops;       // tensor cores (and FP16)
  std::optional<double> fp8_tflops;        // tensor cores
};

struct DeviceInfo {
  std::string name;                 // "NVIDIA H200" or "" when the trace has none
  int32_t num_sms = -1;
  int64_t memory_bytes = -1;
  std::string compute_capability;   // "9.0"
  Ceilings ceilings;
};

struct Distribution {
  double mean = 0, p50 = 0, p95 = 0, min = 0, max = 0;
};

struct Window {
  int64_t steps = 0;
  std::string step_source;          // "ProfilerStep#N annotations" | "whole trace (no step annotations)"
  Distribution step_time_ms;
  double analyzed_ms = 0;           // total time of the analyzed windows
  std::vector<int64_t> step_numbers;
};

// A named share of step time (or of GPU busy time), with absolute ms per step.
struct Share {
  std::string name;
  double pct = 0;
  double ms_per_step = 0;
};

struct Breakdown {
  double gpu_busy_pct = 0;               // union of GPU ops over the analyzed windows
  double gpu_idle_pct = 0;
  std::vector<Share> idle_by_cause;      // % of step time: input, launch_overhead, sync, ...
  std::vector<Share> busy_by_class;      // % of step time: gemm, conv, elementwise, memcpy ...
  std::vector<Share> category_costs;     // % of step time per bottleneck category (the verdict's basis)
};

struct KernelRow {
  std::string name;                      // shortened for display by reporters if needed
  std::string kernel_class;              // "gemm", "elementwise", ...
  std::string precision;                 // "fp32", "tf32", "bf16", ... or ""
  std::optional<bool> tensor_cores;
  int64_t calls = 0;
  double total_ms = 0;                   // over the analyzed windows
  double pct_of_busy = 0;
};

struct Verdict {
  rules::Category bound = rules::Category::kUnknown;
  double confidence = 0;                 // 0..1
  std::string summary;                   // one sentence
};

struct Report {
  std::string tool_version;
  std::vector<InputInfo> inputs;
  std::vector<DeviceInfo> devices;       // devices[0] is the "device" of the JSON contract
  Window window;
  Breakdown breakdown;
  Verdict verdict;
  std::vector<rules::Finding> findings;  // ranked: most step time first
  std::vector<KernelRow> top_kernels;
  std::vector<timeline::ImportStat> import_stats;  // non-zero ones
  double analysis_seconds = 0;           // wall time of import + analysis
};

}  // namespace chokepoint::report
