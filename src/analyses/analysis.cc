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

std::vector<machine::DeviceSpec> device_specs(const Timeline& tl) {
  std::vector<machine::DeviceSpec> v;
  v.reserve(tl.devices.size());
  for (const auto& d : tl.devices) {
    machine::DeviceSpec s;
    s.name = d.name;
    s.num_sms = d.num_sms;
    s.cc_major = d.cc_major;
    s.cc_minor = d.cc_minor;
    s.memory_bytes = d.total_memory_bytes;
    v.push_back(std::move(s));
  }
  return v;
}

const whatif::Estimate* estimate_of(const Analysis& a, whatif::Remedy r) {
  for (const auto& e : a.remedies) {
    if (e.remedy == r) return &e;
  }
  return nullptr;
}

Analysis analyze(const Timeline& tl) { return analyze(tl, machine::published_context(device_specs(tl))); }

Analysis analyze(const Timeline& tl, const machine::MachineContext& ctx, bool what_ifs) {
  Analysis a;
  a.cpus = ctx.cpus;
  a.device_ceilings = ctx.devices;
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
    a.primary_device = static_cast<int>(std::max_element(device_time.begin(), device_time.end()) - device_time.begin());
    if (static_cast<size_t>(a.primary_device) < ctx.devices.size()) {
      a.ceilings = ctx.devices[a.primary_device];
    } else {
      a.ceilings = machine::published_ceilings_for(device_specs(tl)[a.primary_device]);
    }
  } else {
    a.ceilings.source = "unknown";
  }
  a.kernels = compute_kernel_stats(tl, a.index, a.membership, a.ceilings.num_sms);
  a.transfers = compute_transfer_stats(tl, a.index, a.membership, a.ceilings);
  a.api = compute_api_call_stats(tl, a.index, a.windows, a.membership);
  a.fusion = compute_fusion(tl, a.index, a.membership);
  a.roofline = compute_roofline(tl, a.index, a.membership, a.ceilings, a.breakdown.total.duration);

  // What-ifs of the remedies, replayed on the recorded steps.
  if (!what_ifs) return a;
  const whatif::StepGraph graph = whatif::build_step_graph(tl, a.index, a.windows);
  if (!graph.host.empty() || !graph.gpu.empty()) {
    whatif::Context c = whatif::make_context(tl, a.index, graph, a.ceilings);
    c.cpus = a.cpus;
    c.loader_workers = ctx.loader_workers;
    a.remedies = whatif::estimate_remedies(c);
    a.already_applied = whatif::already_applied(c);
    ReplaySummary& r = a.replay;
    r.available = !graph.host.empty() && !graph.gpu.empty();
    r.steps = graph.steps;
    const double n = static_cast<double>(std::max<int64_t>(1, graph.steps));
    r.recorded_step_ms = static_cast<double>(graph.span()) / 1e6 / n;
    r.replayed_step_ms = static_cast<double>(c.recorded_run.total) / 1e6 / n;
    r.plain_step_ms = whatif::steady_step_ns(c.plain_run) / 1e6;
    r.recorder = c.cost.recorder;
    r.threads_overlapped = graph.threads_overlapped;
  }
  return a;
}

}  // namespace chokepoint::analyses
