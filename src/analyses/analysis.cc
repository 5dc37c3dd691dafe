#include "analyses/analysis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace chokepoint::analyses {

namespace {

// A CUPTI trace's what-ifs take the tracer's cost out at kTracerPerCallNs a call, but that
// cost depends on the program (4-13 us a call on the H200). Where the high end moves an
// estimate by 5% or more, the estimate becomes the range between the two and its first
// assumption says why: decode_graphs from a whole `run --trace` read 1.27-1.47x the measured
// gain at 5 us, 1.08x at 13 us (docs/VALIDATION.md).
void note_tracer_cost_range(const timeline::Timeline& tl, Analysis& a, const whatif::StepGraph& graph,
                            const whatif::Context& c) {
  const whatif::RecordingCost high = whatif::with_high_tracer_cost(c.cost);
  whatif::Context ch = whatif::make_context(tl, a.index, graph, a.ceilings, &high);
  ch.cpus = c.cpus;
  ch.loader_workers = c.loader_workers;
  const std::vector<whatif::Estimate> hi = whatif::estimate_remedies(ch);
  const double step_ms = whatif::steady_step_ns(c.recorded_run) / 1e6;
  const double cost_ms = step_ms - whatif::steady_step_ns(c.plain_run) / 1e6;
  for (whatif::Estimate& e : a.remedies) {
    for (const whatif::Estimate& h : hi) {
      if (h.remedy != e.remedy || e.speedup <= 0 || std::abs(h.speedup / e.speedup - 1) < 0.05) continue;
      e.speedup_at_high_cost = h.speedup;
      e.assumptions.insert(
          e.assumptions.begin(),
          fmt::format("The tracer's own cost was taken as {:.0f} us a recorded call ({:.2f} ms of the {:.2f} ms step); "
                      "on the H200 it measured {}, depending on the program: at {:g} us this gain reads "
                      "{:.2f}x, so the estimate is the range between the two.{}",
                      static_cast<double>(c.cost.per_call) / 1e3, cost_ms, step_ms,
                      c.cost.window ? "3.0-6.4 us a call inside a window" : "4-13 us a call over a whole job",
                      static_cast<double>(high.per_call) / 1e3, h.speedup,
                      c.cost.window ? ""
                                    : " A traced window (--trace-steps, --trace-time) costs the job less and "
                                      "reads truer."));
    }
  }
}

}  // namespace

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
    if (c.cost.recorder == "chokepoint tracer") note_tracer_cost_range(tl, a, graph, c);
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
