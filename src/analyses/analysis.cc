#include "analyses/analysis.h"

#include <algorithm>

namespace chokepoint::analyses {

using timeline::Timeline;

double Analysis::pct(TimeNs ns) const {
  const TimeNs t = breakdown.total.duration;
  return t > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(t) : 0.0;
}

double Analysis::ms_per_step(TimeNs ns) const {
  return steps() > 0 ? static_cast<double>(ns) / 1e6 / static_cast<double>(steps()) : 0.0;
}

double projected_speedup(TimeNs total, TimeNs saved, TimeNs floor) {
  if (total <= 0) return 1.0;
  const TimeNs after = std::max({total - std::max<TimeNs>(saved, 0), floor, TimeNs{1}});
  return std::max(1.0, static_cast<double>(total) / static_cast<double>(after));
}

Analysis analyze(const Timeline& tl) {
  Analysis a;
  a.index = build_index(tl);
  a.windows = compute_step_windows(tl, a.index);
  a.membership = assign_windows(tl, a.windows);
  a.breakdown = compute_breakdown(tl, a.index, a.windows);

  std::vector<TimeNs> device_time(tl.devices.size(), 0);
  const auto& g = tl.gpu_ops;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.device[i] >= 0 && static_cast<size_t>(g.device[i]) < device_time.size()) {
      device_time[g.device[i]] += g.end[i] - g.start[i];
    }
  }
  if (!device_time.empty()) {
    a.primary_device = static_cast<int>(std::max_element(device_time.begin(), device_time.end()) -
                                        device_time.begin());
    a.ceilings = machine::ceilings_for(tl.devices[a.primary_device]);
  } else {
    a.ceilings.source = "unknown";
  }
  a.kernels = compute_kernel_stats(tl, a.index, a.membership, a.ceilings.num_sms);
  a.transfers = compute_transfer_stats(tl, a.index, a.membership, a.ceilings);
  a.api = compute_api_call_stats(tl, a.index, a.windows, a.membership);
  a.fusion = compute_fusion(tl, a.index, a.membership);
  a.roofline = compute_roofline(tl, a.index, a.membership, a.ceilings);
  return a;
}

}  // namespace chokepoint::analyses
