#include "analyses/fusion.h"

#include <algorithm>
#include <map>

namespace chokepoint::analyses {

using timeline::GpuOpKind;
using timeline::Timeline;

namespace {

bool fusible(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kNormalization ||
         c == KernelClass::kReduction;
}

double type_bytes(std::string_view t) {
  switch (precision_of_type(t)) {
    case Precision::kFp64: return 8;
    case Precision::kFp32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
    default: return t == "long int" || t == "long" ? 8 : t == "int" ? 4 : t == "bool" ? 1 : 0;
  }
}

// Bytes an elementwise-like op moves at least: its tensor inputs read once and an output
// as large as the largest input written once.
double op_bytes(const Timeline& tl, int32_t op_row) {
  if (op_row < 0) return 0;
  const uint32_t in = tl.cpu_ranges.inputs[op_row];
  if (in == timeline::CpuRanges::kNoInputs) return 0;
  const auto& oi = tl.op_inputs;
  double sum = 0, largest = 0;
  for (uint32_t j = 0; j < oi.num_inputs(in); ++j) {
    const double eb = type_bytes(tl.strings.view(oi.input_type(in, j)));
    if (eb == 0 || oi.rank(in, j) == 0) continue;
    double n = 1;
    for (uint32_t k = 0; k < oi.rank(in, j); ++k) n *= static_cast<double>(std::max<int64_t>(0, oi.dim(in, j, k)));
    sum += n * eb;
    largest = std::max(largest, n * eb);
  }
  return sum + largest;
}

}  // namespace

FusionStats compute_fusion(const Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm) {
  FusionStats fs;
  const auto& g = tl.gpu_ops;
  struct Run {
    int64_t n = 0;
    TimeNs ns = 0, longest = 0;
    int32_t window = -1;
  };
  std::map<std::pair<int16_t, int32_t>, Run> open;  // per (device, stream)
  auto close = [&](Run& r) {
    if (r.n >= 2) {
      ++fs.chains;
      fs.chain_kernels += r.n;
      fs.chain_ns += r.ns;
      fs.chain_fused_ns += r.longest;
    }
    r = Run{.window = r.window};
  };
  for (size_t i = 0; i < g.size(); ++i) {  // in start order
    if (wm.gpu_op[i] < 0) continue;
    Run& r = open[{g.device[i], g.stream[i]}];
    // A chain ends at any other GPU op on its stream and at a step boundary (one compiled
    // graph does not span optimizer steps).
    if (r.window != wm.gpu_op[i]) close(r);
    r.window = wm.gpu_op[i];
    if (g.kind[i] != GpuOpKind::kKernel || !fusible(ix.kclass[i])) {
      close(r);
      continue;
    }
    const TimeNs dur = g.end[i] - g.start[i];
    ++fs.fusible_kernels;
    fs.fusible_ns += dur;
    ++r.n;
    r.ns += dur;
    r.longest = std::max(r.longest, dur);
    const double b = op_bytes(tl, ix.op_row[i]);
    if (b > 0) {
      fs.bytes_known += b;
      fs.ns_known += dur;
    }
  }
  for (auto& [k, r] : open) close(r);
  if (fs.ns_known > 0) fs.achieved_gbps = fs.bytes_known / static_cast<double>(fs.ns_known);
  return fs;
}

}  // namespace chokepoint::analyses
