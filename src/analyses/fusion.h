// Memory-bound, fusible kernels: elementwise, normalization and reduction kernels, the
// runs ("chains") of them that follow each other on one stream, what one fused kernel per
// chain would cost, and the bandwidth they reach against HBM.
#pragma once

#include <optional>

#include "analyses/index.h"
#include "analyses/steps.h"
#include "machine/ceilings.h"

namespace chokepoint::analyses {

struct FusionStats {
  TimeNs fusible_ns = 0;  // elementwise + normalization + reduction kernel time
  int64_t fusible_kernels = 0;
  int64_t chains = 0;  // runs of >= 2 such kernels back to back on one stream
  int64_t chain_kernels = 0;
  TimeNs chain_ns = 0;                  // time of the kernels in chains
  TimeNs chain_fused_ns = 0;            // estimate with one kernel per chain: its longest member
  double bytes_known = 0;               // bytes moved by fusible kernels whose op recorded dims
  TimeNs ns_known = 0;                  // their time
  std::optional<double> achieved_gbps;  // bytes_known / ns_known
};

FusionStats compute_fusion(const timeline::Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm);

}  // namespace chokepoint::analyses
