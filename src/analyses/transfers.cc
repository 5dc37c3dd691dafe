#include "analyses/transfers.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace chokepoint::analyses {

using timeline::CopyKind;
using timeline::GpuOpKind;
using timeline::MemKind;
using timeline::Timeline;

TransferStats compute_transfer_stats(const Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                                     const machine::Ceilings& c) {
  TransferStats ts;
  const auto& g = tl.gpu_ops;
  // Kernel time per device, to tell exposed copies from hidden ones.
  std::vector<Intervals> kernels(ix.device_ops.size());
  for (size_t d = 0; d < ix.device_ops.size(); ++d) {
    for (uint32_t op : ix.device_ops[d]) {
      if (g.kind[op] == GpuOpKind::kKernel) kernels[d].add(g.start[op], g.end[op]);
    }
    kernels[d].build();
  }
  std::map<std::tuple<CopyKind, MemKind, MemKind>, CopyGroup> groups;
  for (size_t i = 0; i < g.size(); ++i) {
    if (wm.gpu_op[i] < 0) continue;
    const TimeNs dur = g.end[i] - g.start[i];
    if (g.kind[i] == GpuOpKind::kMemset) {
      ts.memset_ns += dur;
      continue;
    }
    if (g.kind[i] != GpuOpKind::kMemcpy) continue;
    CopyGroup& grp = groups[{g.copy_kind[i], g.src_kind[i], g.dst_kind[i]}];
    grp.kind = g.copy_kind[i];
    grp.src = g.src_kind[i];
    grp.dst = g.dst_kind[i];
    ++grp.count;
    grp.bytes += std::max<int64_t>(0, g.bytes[i]);
    grp.ns += dur;
    const bool host_device = grp.kind == CopyKind::kHtoD || grp.kind == CopyKind::kDtoH ||
                             grp.kind == CopyKind::kHtoH || grp.kind == CopyKind::kPtoP;
    if (host_device) {
      ts.host_device_ns += dur;
      ts.host_device_bytes += std::max<int64_t>(0, g.bytes[i]);
      const int16_t d = g.device[i];
      const TimeNs hidden = d >= 0 && static_cast<size_t>(d) < kernels.size() ? kernels[d].overlap(g.start[i], g.end[i])
                                                                              : 0;
      ts.host_device_exposed_ns += dur - hidden;
    }
    if (g.src_kind[i] == MemKind::kPageable || g.dst_kind[i] == MemKind::kPageable) {
      ++ts.pageable_count;
      ts.pageable_bytes += std::max<int64_t>(0, g.bytes[i]);
      ts.pageable_ns += dur;
      if (c.pcie_gbps) {
        ts.pageable_at_pinned_ns += static_cast<TimeNs>(static_cast<double>(g.bytes[i]) / *c.pcie_gbps);
      }
    }
  }
  for (auto& [key, grp] : groups) {
    grp.achieved_gbps = grp.ns > 0 ? static_cast<double>(grp.bytes) / static_cast<double>(grp.ns) : 0;
    if (grp.kind == CopyKind::kDtoD) grp.ceiling_gbps = c.d2d_copy_gbps;  // bytes counted once
    else if (grp.kind == CopyKind::kHtoD || grp.kind == CopyKind::kDtoH) grp.ceiling_gbps = c.pcie_gbps;
    ts.groups.push_back(grp);
  }
  std::sort(ts.groups.begin(), ts.groups.end(), [](const CopyGroup& a, const CopyGroup& b) { return a.ns > b.ns; });
  return ts;
}

}  // namespace chokepoint::analyses
