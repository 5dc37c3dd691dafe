#include "analyses/fusion.h"
#include "analyses/op_shapes.h"

#include <algorithm>
#include <map>

namespace chokepoint::analyses {

using timeline::GpuOpKind;
using timeline::Timeline;

namespace {

bool fusible(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kNormalization || c == KernelClass::kReduction;
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
    const double b = ix.op_bytes[i];
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
