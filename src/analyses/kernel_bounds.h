// The per-kernel roofline of `chokepoint kernels` (issue 17): each of the top kernels
// placed against the machine's ceilings (published, a saved `bench` profile, or
// --ceilings) and classified memory-bound, compute-bound or latency/occupancy-bound, with
// the limiter and the advice that fits. From Nsight Compute's counters of one launch
// (measured FLOPs, DRAM bytes, occupancy and its limiter), or, from a trace alone, from
// the kernel's class, its launching op's shapes, grid and estimated occupancy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "analyses/kernel_class.h"
#include "machine/ceilings.h"
#include "timeline/kernel_metrics.h"

namespace chokepoint::analyses {

enum class Bound : uint8_t { kUnknown, kMemory, kCompute, kLatency };
// "memory-bound", "compute-bound", "latency/occupancy-bound", "unknown".
const char* bound_name(Bound b);

// A unit this busy (percent of its peak) bounds the kernel.
inline constexpr double kBusyPct = 60;

struct KernelPoint {
  std::string name;
  KernelClass kclass = KernelClass::kOther;
  Precision precision = Precision::kUnknown;  // of most of its FLOPs
  bool measured = false;                      // figures from hardware counters (ncu)
  int64_t calls = 0;                          // launches in the trace (1 for an ncu row)
  double ns = 0;                              // time of those launches
  double time_pct = -1;                       // of all kernel time in the input, -1 unknown
  // Work of those launches: measured (ncu), or from the launching ops' recorded shapes.
  std::optional<double> flops, dram_bytes, l2_bytes;
  std::optional<double> tflops, dram_gbps, intensity;  // achieved; FLOP per DRAM byte
  std::optional<double> peak_tflops, hbm_gbps, ridge;  // ceilings of this precision
  std::optional<double> compute_pct, memory_pct;       // achieved / ceiling, percent
  // Counters (ncu): SM and tensor-pipe busy, achieved and theoretical occupancy.
  std::optional<double> sm_pct, tensor_pipe_pct, occupancy_pct, theoretical_occupancy_pct;
  std::optional<double> sm_clock_mhz;  // the SM clock during the profiled launch
  int64_t grid_blocks = -1, block_threads = -1;
  int32_t registers = -1;
  std::optional<double> shared_mem_bytes;  // per block
  // bench's figure of the same kind (the GEMM of this precision, or DRAM bandwidth) and
  // the achieved figure against it, where the bound makes them comparable.
  std::string bench_figure;  // "bf16 GEMM", "HBM"
  std::optional<double> bench_value, pct_of_bench;
  // Compute-bound kernels measured at another SM clock than bench's GEMM: bench's clock,
  // and the achieved figure scaled to it against bench's (tensor throughput per clock).
  std::optional<double> bench_mhz, pct_of_bench_at_clock;
  Bound bound = Bound::kUnknown;
  std::string limiter;  // latency-bound: "grid", "shared memory", "registers", "block size", "warps", "latency"
  std::string why;      // the evidence behind the bound, one sentence
  std::string advice;   // what to do about it
};

struct KernelsView {
  std::vector<std::string> inputs;
  bool measured = false;  // ncu counters, not a trace's estimate
  machine::Ceilings ceilings;
  double kernel_ns = 0;              // all kernel time in the input
  size_t kernels_total = 0;          // distinct kernels in the input
  std::vector<KernelPoint> kernels;  // the top ones, most time first
  std::vector<std::string> notes;    // what the reader should know (ncu's warnings, fallbacks)
};

// One launch profiled by ncu, on the ceilings `c`.
KernelPoint point_from_ncu(const timeline::KernelMetrics& m, const machine::Ceilings& c);

// The top `top` kernels of an analyzed trace (all when 0), by time in the analyzed windows.
std::vector<KernelPoint> points_from_trace(const timeline::Timeline& tl, const Analysis& a, size_t top);

}  // namespace chokepoint::analyses
