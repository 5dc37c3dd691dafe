// Memcpy and memset over the step windows: by direction and memory kind, achieved
// bandwidth against the ceiling, pageable copies, and how much copy time was exposed
// (not overlapped by kernels on the same device).
#pragma once

#include <optional>
#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"
#include "machine/ceilings.h"

namespace chokepoint::analyses {

struct CopyGroup {
  timeline::CopyKind kind = timeline::CopyKind::kUnknown;
  timeline::MemKind src = timeline::MemKind::kUnknown, dst = timeline::MemKind::kUnknown;
  int64_t count = 0;
  int64_t bytes = 0;
  TimeNs ns = 0;
  double achieved_gbps = 0;            // bytes / time, GB/s
  std::optional<double> ceiling_gbps;  // link (host<->device) or DtoD copy rate (bytes once)
};

struct TransferStats {
  std::vector<CopyGroup> groups;      // sorted by time, descending
  TimeNs host_device_ns = 0;          // H2D + D2H (+ HtoH, PtoP) copy time
  TimeNs host_device_exposed_ns = 0;  // of which no kernel ran on the same device
  int64_t host_device_bytes = 0;
  int64_t pageable_count = 0;
  int64_t pageable_bytes = 0;
  TimeNs pageable_ns = 0;
  TimeNs pageable_at_pinned_ns = 0;  // the same bytes at the pinned ceiling
  TimeNs memset_ns = 0;
};

TransferStats compute_transfer_stats(const timeline::Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                                     const machine::Ceilings& c);

using timeline::copy_kind_name;  // "HtoD", ... (timeline/model.h)
using timeline::mem_kind_name;   // "Pageable", ...

}  // namespace chokepoint::analyses
