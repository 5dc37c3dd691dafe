// FLOPs and bytes of GEMM-like ATen ops from their recorded input dims (record_shapes),
// giving achieved TFLOP/s, arithmetic intensity and a roofline position against the
// device's ceilings for the precision the kernels ran in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"
#include "machine/ceilings.h"

namespace chokepoint::analyses {

struct RooflineRow {
  std::string op;                             // "aten::addmm"
  std::string shape;                          // "[8192,4096]x[4096,4096]"
  Precision precision = Precision::kUnknown;  // as run (tf32 when fp32 on tensor cores)
  int64_t calls = 0;
  double flops = 0;   // total over calls
  double bytes = 0;   // minimum traffic: inputs read once, output written once
  TimeNs gpu_ns = 0;  // time of the kernels these ops launched
  double achieved_tflops = 0;
  double intensity = 0;                     // FLOP per byte
  std::optional<double> peak_tflops;        // ceiling for this precision
  std::optional<double> attainable_tflops;  // min(peak, intensity * HBM bandwidth)
  bool memory_bound = false;                // intensity below the ridge point
};

// Every kernel class over the analyzed windows: its time, the work known for it (FLOPs
// of GEMM-like ops, bytes of ops with recorded shapes), what it achieved and what bounds it.
struct ClassRoofline {
  KernelClass kclass = KernelClass::kOther;
  int64_t kernels = 0;
  TimeNs ns = 0;
  double flops = 0;  // of the kernels whose op recorded shapes
  TimeNs ns_with_flops = 0;
  double bytes = 0;  // fewest bytes their ops move, where shapes were recorded
  TimeNs ns_with_bytes = 0;
  TimeNs memory_bound_ns = 0;  // of the time, kernels below the ridge point (or moving bytes)
  std::optional<double> achieved_tflops() const {
    return ns_with_flops > 0 && flops > 0 ? std::optional<double>(flops / static_cast<double>(ns_with_flops) / 1e3)
                                          : std::nullopt;
  }
  std::optional<double> achieved_gbps() const {
    return ns_with_bytes > 0 && bytes > 0 ? std::optional<double>(bytes / static_cast<double>(ns_with_bytes))
                                          : std::nullopt;
  }
};

struct RooflineStats {
  std::vector<RooflineRow> rows;  // sorted by gpu time, descending
  double flops = 0;
  TimeNs gpu_ns = 0;
  std::vector<ClassRoofline> classes;  // kernel classes with time, most time first
  // GEMM/conv/attention kernel time below the ridge point of its precision: from the op's
  // shapes (FLOPs per byte), or a GEMV by name (a matrix-vector product streams the matrix
  // once: 2 FLOP per element). Counted as memory, not compute, in the verdict.
  TimeNs matrix_memory_bound_ns = 0;
  // Model FLOPs utilization: the GEMM-like FLOPs recorded per analyzed second against the
  // peak of the precision most matrix time ran in; nullopt without shapes or a ceiling.
  std::optional<double> mfu_pct;
  Precision mfu_precision = Precision::kUnknown;
};

// Peak TFLOP/s of matrix work in `p` on the device (FP32 without tensor cores for kFp32).
std::optional<double> peak_tflops(const machine::Ceilings& c, Precision p);

// analyzed_ns: the time of the analyzed windows (the MFU denominator).
RooflineStats compute_roofline(const timeline::Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                               const machine::Ceilings& c, TimeNs analyzed_ns);

// True when a matrix kernel's name says it multiplies a skinny matrix: a matrix-vector
// product (cuBLAS gemv*), or a CTA tile with a side of 16 or less (nvjet's 256x8 tiles
// for a decode GEMV, cutlass's ..._128x16_...): it streams the other operand from HBM,
// a few FLOPs per byte. Used where the op's shapes were not recorded (CUPTI traces).
bool is_gemv_kernel(std::string_view kernel_name);

}  // namespace chokepoint::analyses
