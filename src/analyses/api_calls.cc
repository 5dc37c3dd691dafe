#include "analyses/api_calls.h"

#include <algorithm>
#include <map>

namespace chokepoint::analyses {

using timeline::GpuOpKind;
using timeline::Timeline;

namespace {

double percentile_us(std::vector<TimeNs>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return static_cast<double>(v[k]) / 1000.0;
}

}  // namespace

ApiCallStats compute_api_call_stats(const Timeline& tl, const TimelineIndex& ix, const StepWindows& w,
                                    const WindowMembership& wm) {
  ApiCallStats s;
  const auto& rc = tl.runtime_calls;
  const auto& g = tl.gpu_ops;

  // The first window of each process warms up the caching allocator; judge the rest.
  std::map<int32_t, int32_t> first_window;
  for (size_t k = 0; k < w.steps.size(); ++k) {
    auto [it, fresh] = first_window.emplace(w.steps[k].pid, static_cast<int32_t>(k));
    if (!fresh && w.steps[k].start < w.steps[it->second].start) it->second = static_cast<int32_t>(k);
  }
  std::vector<bool> steady(w.steps.size(), !w.whole_trace);
  for (const auto& [pid, k] : first_window) steady[k] = false;
  s.steady_windows = std::count(steady.begin(), steady.end(), true);

  std::map<std::pair<timeline::StringId, timeline::StringId>, SyncSite> sites;
  for (size_t i = 0; i < rc.size(); ++i) {
    const int32_t win = wm.runtime_call[i];
    if (win < 0) continue;
    const TimeNs dur = rc.end[i] - rc.start[i];
    switch (ix.api[i]) {
      case timeline::ApiClass::kLaunch:
        ++s.launches;
        s.launch_api_ns += dur;
        break;
      case timeline::ApiClass::kGraphLaunch:
        ++s.graph_launches;
        s.launch_api_ns += dur;
        break;
      case timeline::ApiClass::kSync: {
        ++s.syncs;
        s.sync_blocked_ns += dur;
        const int32_t op = ix.api_op_row[i];
        const timeline::StringId op_name = op >= 0 ? tl.cpu_ranges.name[op] : timeline::kEmptyString;
        SyncSite& site = sites[{rc.name[i], op_name}];
        site.api = std::string(tl.strings.view(rc.name[i]));
        site.op = std::string(tl.strings.view(op_name));
        ++site.count;
        site.blocked_ns += dur;
        break;
      }
      case timeline::ApiClass::kAlloc:
      case timeline::ApiClass::kFree:
        if (steady[win]) {
          (ix.api[i] == timeline::ApiClass::kAlloc ? s.steady_allocs : s.steady_frees) += 1;
          s.steady_allocator_ns += dur;
        }
        break;
      default: break;
    }
  }
  for (auto& [k, site] : sites) s.sync_sites.push_back(site);
  std::sort(s.sync_sites.begin(), s.sync_sites.end(),
            [](const SyncSite& a, const SyncSite& b) { return a.blocked_ns > b.blocked_ns; });

  std::vector<TimeNs> delays, durs;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] != GpuOpKind::kKernel || wm.gpu_op[i] < 0) continue;
    const TimeNs dur = g.end[i] - g.start[i];
    ++s.kernels;
    durs.push_back(dur);
    if (dur < kShortKernelNs) ++s.short_kernels;
    const int32_t r = ix.launch_row[i];
    if (r >= 0 && timeline::is_launch(ix.api[r])) {
      delays.push_back(std::max<TimeNs>(0, g.start[i] - rc.end[r]));
    }
  }
  s.launch_delay_p50_us = percentile_us(delays, 0.5);
  s.launch_delay_p95_us = percentile_us(delays, 0.95);
  s.kernel_p50_us = percentile_us(durs, 0.5);
  return s;
}

}  // namespace chokepoint::analyses
