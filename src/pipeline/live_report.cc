#include "pipeline/live_report.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "analyses/analysis.h"
#include "base/version.h"
#include "pipeline/analyze_pipeline.h"
#include "pipeline/build_report.h"
#include "pipeline/live_series.h"
#include "samples/recording_writer.h"

namespace chokepoint::pipeline {
namespace fs = std::filesystem;
namespace {

using analyses::sampled::Stat;

// How many processes the report lists.
constexpr size_t kTopProcesses = 8;

std::optional<report::LiveStat> live_stat(const std::optional<Stat>& s, double scale = 1.0) {
  if (!s) return std::nullopt;
  return report::LiveStat{s->mean * scale, s->p95 * scale, s->max * scale};
}

}  // namespace

Result<report::Report> analyze_recording_dir(const std::string& dir, const AnalyzeOptions& ao) {
  const auto t0 = std::chrono::steady_clock::now();
  auto in = load_recording(dir);
  if (!in.ok()) return in.status();
  auto r = analyze_inputs(in.value(), ao);
  if (!r.ok()) return r.status();
  r->analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

report::Report build_live_report(const std::string& dir, const samples::Recording& rec,
                                 const analyses::sampled::LiveAnalysis& la, const rules::Diagnosis& d) {
  report::Report r;
  r.tool_version = CHOKEPOINT_VERSION;
  report::InputInfo in;
  in.path = dir;
  in.format = "chokepoint.recording";
  std::error_code ec;
  for (const char* f : {samples::kMetaFile, samples::kSamplesFile, samples::kSamplesGzFile}) {
    const auto size = fs::file_size(fs::path(dir) / f, ec);
    if (!ec) in.bytes += size;
  }
  in.events = rec.ticks;
  r.inputs.push_back(in);

  for (const auto* g : la.judged_gpus()) {
    report::DeviceInfo di;
    di.name = g->name;
    if (g->mem_total_bytes) di.memory_bytes = static_cast<int64_t>(*g->mem_total_bytes);
    for (const auto& gm : rec.meta.gpus) {
      if (gm.index == g->index && gm.sm_count) di.num_sms = static_cast<int32_t>(*gm.sm_count);
    }
    r.devices.push_back(di);
  }

  r.window.steps = 0;
  r.window.step_source = "live samples (no steps)";
  r.window.analyzed_ms = la.duration_s * 1e3;

  apply_diagnosis(r, d);
  for (const auto& c : d.costs) r.breakdown.category_costs.push_back({rules::category_name(c.category), c.pct, 0});

  report::LiveSummary s;
  s.recording = dir;
  s.command = rec.meta.command;
  s.exit_code = rec.meta.exit_code;
  s.complete = rec.complete;
  s.duration_s = la.duration_s;
  s.ticks = la.ticks;
  s.interval_ms = static_cast<double>(rec.meta.interval_ns) / 1e6;
  s.gpu_note = rec.meta.gpu_note;
  s.gpu_unavailable = la.gpu_unavailable;
  for (const auto& g : la.gpus) {
    report::LiveGpu lg;
    lg.index = g.index;
    lg.name = g.name;
    lg.used = g.used;
    lg.active_s = g.active_s();
    if (g.active_start_ns >= 0) lg.first_work_s = static_cast<double>(g.active_start_ns - la.start_ns) / 1e9;
    lg.util_pct = live_stat(g.util);
    lg.sm_active_pct = live_stat(g.sm_active);
    lg.sm_occupancy_pct = live_stat(g.sm_occupancy);
    lg.tensor_active_pct = live_stat(g.tensor_active);
    lg.dram_active_pct = live_stat(g.dram_active);
    lg.pcie_rx_bytes_per_s = live_stat(g.pcie_rx);
    lg.pcie_tx_bytes_per_s = live_stat(g.pcie_tx);
    lg.power_w = live_stat(g.power_w);
    lg.sm_clock_mhz = live_stat(g.sm_clock_mhz);
    lg.memory_used_max_bytes = g.mem_used_max_bytes;
    lg.memory_total_bytes = g.mem_total_bytes;
    lg.power_limit_w = g.power_limit_w;
    lg.link_gen_seen = g.link_gen_seen;
    lg.link_width_seen = g.link_width_seen;
    lg.link_gen_max = g.link_gen_max;
    lg.link_width_max = g.link_width_max;
    for (const auto& c : g.clock_reasons) lg.clock_reasons.push_back({c.name, c.share});
    s.gpus.push_back(std::move(lg));
  }
  const auto& h = la.host;
  s.host.cpus = h.cpu_count;
  s.host.user_pct = live_stat(h.user_pct);
  s.host.system_pct = live_stat(h.system_pct);
  s.host.iowait_pct = live_stat(h.iowait_pct);
  s.host.steal_pct = live_stat(h.steal_pct);
  s.host.procs_running = live_stat(h.procs_running);
  s.host.ctx_switches_per_s = live_stat(h.ctx_switches_per_s);
  s.host.swap_in_pages_per_s = live_stat(h.swap_in_per_s);
  s.host.swap_out_pages_per_s = live_stat(h.swap_out_per_s);
  s.host.psi_cpu_some = live_stat(h.psi_cpu_some);
  s.host.psi_memory_some = live_stat(h.psi_mem_some);
  s.host.psi_io_some = live_stat(h.psi_io_some);
  s.processes_seen = static_cast<int64_t>(la.processes.size());
  s.tree_cpu_pct_mean = la.tree_cpu_pct_mean;
  for (size_t i = 0; i < std::min(kTopProcesses, la.processes.size()); ++i) {
    const auto& p = la.processes[i];
    report::LiveProcess lp;
    lp.pid = p.meta.pid;
    lp.comm = p.meta.comm;
    lp.role = std::string(samples::role_name(p.meta.role));
    lp.cpu_pct = live_stat(p.cpu_pct);
    if (p.threads_running) lp.threads_running_mean = p.threads_running->mean;
    lp.threads_seen = static_cast<int64_t>(p.threads.size());
    s.top_processes.push_back(std::move(lp));
  }
  add_live_series(s, rec, la.start_ns, la.end_ns);
  r.live = std::move(s);

  for (const auto& st : rec.stats) {
    r.import_stats.push_back({st.name, st.severity, st.description, static_cast<int64_t>(st.count)});
  }
  return r;
}

std::string live_verdict_line(const samples::RunMeta& meta, const std::map<int64_t, samples::ProcessMeta>& processes,
                              const std::deque<samples::Tick>& ticks) {
  if (ticks.empty()) return "";
  samples::Recording rec;
  rec.meta = meta;
  rec.meta.processes.clear();
  for (const auto& [pid, p] : processes) rec.meta.processes.push_back(p);
  rec.meta.start_ns = ticks.front().time_ns;
  rec.meta.end_ns = ticks.back().time_ns;
  rec.complete = true;
  for (const samples::Tick& t : ticks) rec.samples.append(t);
  rec.ticks = ticks.size();
  const analyses::sampled::LiveAnalysis la = analyses::sampled::analyze_recording(rec);
  const rules::Diagnosis d = rules::diagnose_samples(rec, la);
  double active = 0;
  for (const auto* g : la.judged_gpus()) active = std::max(active, g->active_s());
  std::string line = rules::category_name(d.bound);
  if (!d.findings.empty()) line += ": " + d.findings.front().id;
  if (!d.remedies.empty()) {
    const rules::RemedyAdvice& r = d.remedies.front();
    line += " -> " + r.id;
    if (r.estimated_speedup) line += fmt::format(" ({:.2f}x)", *r.estimated_speedup);
  }
  if (la.gpu_metrics && active <= 0) {
    line += " (no GPU work yet)";
  } else if (la.gpu_metrics && active < kSureActiveS) {
    line += fmt::format(" (unsure: the GPU active {:.0f} s of the last {:.0f} s)", active, la.duration_s);
  } else if (d.confidence < 0.5) {
    line += fmt::format(" (unsure: confidence {:.2f})", d.confidence);
  }
  return line;
}

}  // namespace chokepoint::pipeline
