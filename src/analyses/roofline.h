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
  std::string op;                 // "aten::addmm"
  std::string shape;              // "[8192,4096]x[4096,4096]"
  Precision precision = Precision::kUnknown;   // as run (tf32 when fp32 on tensor cores)
  int64_t calls = 0;
  double flops = 0;               // total over calls
  double bytes = 0;               // minimum traffic: inputs read once, output written once
  TimeNs gpu_ns = 0;              // time of the kernels these ops launched
  double achieved_tflops = 0;
  double intensity = 0;           // FLOP per byte
  std::optional<double> peak_tflops;      // ceiling for this precision
  std::optional<double> attainable_tflops; // min(peak, intensity * HBM bandwidth)
  bool memory_bound = false;      // intensity below the ridge point
};

struct RooflineStats {
  std::vector<RooflineRow> rows;  // sorted by gpu time, descending
  double flops = 0;
  TimeNs gpu_ns = 0;
};

// Peak TFLOP/s of matrix work in `p` on the device (FP32 without tensor cores for kFp32).
std::optional<double> peak_tflops(const machine::Ceilings& c, Precision p);

RooflineStats compute_roofline(const timeline::Timeline& tl, const TimelineIndex& ix,
                               const WindowMembership& wm, const machine::Ceilings& c);

}  // namespace chokepoint::analyses
