#include "report/json_reporter.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/distributed_render.h"
#include "report/format_util.h"

namespace chokepoint::report {
namespace {

using Json = nlohmann::ordered_json;

// A float for the report: rounded, and null when it is not a number (a NaN from an empty
// denominator must read as "unknown", never as a value).
Json num(double v) {
  if (!std::isfinite(v)) return nullptr;
  return round_significant(v);
}

Json num(const std::optional<double>& v) { return v ? num(*v) : Json(nullptr); }

// [low, high] when an estimate is a range (rules::RemedyAdvice::speedup_range_end), else null.
Json range_json(const std::optional<double>& estimate, const std::optional<double>& other_end) {
  if (!estimate || !other_end) return nullptr;
  return Json::array({num(std::min(*estimate, *other_end)), num(std::max(*estimate, *other_end))});
}

// Strings, integers and flags whose "unknown" is a sentinel in the report structs.
Json str_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

// What the job is (analyses/fingerprint.h): hashes as 16 hex digits (JSON numbers lose
// 64-bit integers in many readers).
Json fingerprint_json(const analyses::Fingerprint& f) {
  auto hashes = [](const std::vector<uint64_t>& v) {
    Json a = Json::array();
    for (uint64_t h : v) a.push_back(fmt::format("{:016x}", h));
    return a;
  };
  return Json{{"program", str_or_null(f.program)}, {"kernels", hashes(f.kernels)}, {"shapes", hashes(f.shapes)}};
}
Json int_or_null(int64_t v) { return v < 0 ? Json(nullptr) : Json(v); }
Json bool_or_null(const std::optional<bool>& v) { return v ? Json(*v) : Json(nullptr); }

Json ceilings_json(const Ceilings& c) {
  Json j;
  j["source"] = str_or_null(c.source);
  j["hbm_gbps"] = num(c.hbm_gbps);
  j["pcie_gbps"] = num(c.pcie_gbps);
  j["fp32_tflops"] = num(c.fp32_tflops);
  j["tf32_tflops"] = num(c.tf32_tflops);
  j["bf16_tflops"] = num(c.bf16_tflops);
  j["fp8_tflops"] = num(c.fp8_tflops);
  j["fp4_tflops"] = num(c.fp4_tflops);
  j["int8_tops"] = num(c.int8_tops);
  j["l2_mb"] = num(c.l2_mb);
  j["gpu"] = str_or_null(c.gpu);
  j["note"] = str_or_null(c.note);
  j["missing"] = c.missing;
  j["missing_hint"] = str_or_null(c.missing_hint);
  return j;
}

Json device_json(const DeviceInfo& d) {
  Json j;
  j["name"] = str_or_null(d.name);
  j["sms"] = int_or_null(d.num_sms);
  j["memory_bytes"] = int_or_null(d.memory_bytes);
  j["compute_capability"] = str_or_null(d.compute_capability);
  j["ceilings"] = ceilings_json(d.ceilings);
  return j;
}

Json window_json(const Window& w) {
  // Without a single step the step-time distribution is unknown, not zero.
  const bool has_steps = w.steps > 0;
  auto stat = [&](double v) { return has_steps ? num(v) : Json(nullptr); };
  Json j;
  j["steps"] = w.steps;
  j["step_source"] = str_or_null(w.step_source);
  j["step_time_ms"] = Json{{"mean", stat(w.step_time_ms.mean)},
                           {"p50", stat(w.step_time_ms.p50)},
                           {"p95", stat(w.step_time_ms.p95)},
                           {"min", stat(w.step_time_ms.min)},
                           {"max", stat(w.step_time_ms.max)}};
  j["analyzed_ms"] = num(w.analyzed_ms);
  j["step_numbers"] = w.step_numbers;
  Json step_ms = Json::array();
  for (double v : w.step_ms) step_ms.push_back(num(v));
  j["step_ms"] = std::move(step_ms);
  Json windows = Json::array();  // profiler windows of one process, one file each
  for (const ProfilerWindow& pw : w.profiler_windows) {
    windows.push_back(Json{{"path", pw.path},
                           {"steps", pw.steps},
                           {"first_step", pw.first_step},
                           {"last_step", pw.last_step},
                           {"step_time_ms", Json{{"p50", num(pw.step_time_ms.p50)}, {"p95", num(pw.step_time_ms.p95)}}},
                           {"gpu_busy_pct", num(pw.gpu_busy_pct)}});
  }
  j["profiler_windows"] = std::move(windows);
  return j;
}

// {name: pct} and {name: ms} objects; an empty list is {} so consumers can always index.
Json pct_map(const std::vector<Share>& shares) {
  Json j = Json::object();
  for (const Share& s : shares) j[s.name] = num(s.pct);
  return j;
}

Json ms_map(const std::vector<Share>& shares) {
  Json j = Json::object();
  for (const Share& s : shares) j[s.name] = num(s.ms_per_step);
  return j;
}

// Without a GPU in the input its busy and idle shares are unknown (null), not 0 and 100,
// and no idle cause is listed.
Json breakdown_json(const Breakdown& b, bool gpu) {
  Json j;
  j["gpu_busy_pct"] = gpu ? num(b.gpu_busy_pct) : Json(nullptr);
  j["gpu_idle_pct"] = gpu ? num(b.gpu_idle_pct) : Json(nullptr);
  j["idle_pct"] = gpu ? pct_map(b.idle_by_cause) : Json::object();  // the same shape, no entries
  j["idle_ms_per_step"] = gpu ? ms_map(b.idle_by_cause) : Json::object();
  j["busy_pct"] = pct_map(b.busy_by_class);
  j["busy_ms_per_step"] = ms_map(b.busy_by_class);
  j["category_cost_pct"] = pct_map(b.category_costs);
  return j;
}

Json finding_json(const rules::Finding& f) {
  Json evidence = Json::array();
  for (const rules::Evidence& e : f.evidence) {
    evidence.push_back(Json{{"metric", e.metric},
                            {"value", num(e.value)},
                            {"threshold", num(e.threshold)},
                            {"threshold_side", e.threshold ? Json(rules::threshold_side_name(e.side)) : Json(nullptr)},
                            {"unit", str_or_null(e.unit)}});
  }
  Json j;
  j["id"] = f.id;
  j["category"] = rules::category_name(f.category);
  j["severity"] = severity_name(f.severity);
  j["title"] = f.title;
  j["detail"] = str_or_null(f.detail);
  j["evidence"] = std::move(evidence);
  j["recommendation"] = str_or_null(f.recommendation);
  j["estimated_speedup"] = num(f.estimated_speedup);
  j["estimated_speedup_range"] = range_json(f.estimated_speedup, f.speedup_range_end);
  j["estimate_remedy"] = str_or_null(f.estimate_remedy);  // whose estimate it is
  j["time_share_pct"] = num(f.time_share_pct);
  j["remedies"] = f.remedies;
  j["sources"] = f.sources;
  return j;
}

Json remedy_json(const rules::RemedyAdvice& r) {
  Json j;
  j["id"] = r.id;
  j["title"] = r.title;
  j["change"] = r.change;
  j["estimated_speedup"] = num(r.estimated_speedup);
  j["estimated_speedup_range"] = range_json(r.estimated_speedup, r.speedup_range_end);
  j["estimate_from"] = str_or_null(r.estimate_from);
  j["step_ms_before"] = r.estimate_from == "trace what-if" ? num(r.step_ms_before) : Json(nullptr);
  j["step_ms_after"] = r.estimate_from == "trace what-if" ? num(r.step_ms_after) : Json(nullptr);
  j["what_changes"] = str_or_null(r.what_changes);
  j["assumptions"] = r.assumptions;
  j["findings"] = r.findings;
  j["changes_training"] = r.changes_training;
  return j;
}

Json roofline_json(const RooflineClass& c) {
  return Json{{"class", c.kernel_class},
              {"kernels", c.kernels},
              {"ms_per_step", num(c.ms_per_step)},
              {"pct_of_step", num(c.pct_of_step)},
              {"achieved_tflops", num(c.achieved_tflops)},
              {"pct_of_peak", num(c.pct_of_peak)},
              {"achieved_gbps", num(c.achieved_gbps)},
              {"pct_of_hbm", num(c.pct_of_hbm)},
              {"bound", str_or_null(c.bound)}};
}

Json kernel_json(const KernelRow& k) {
  Json j;
  j["name"] = k.name;
  j["class"] = str_or_null(k.kernel_class);
  j["precision"] = str_or_null(k.precision);
  j["tensor_cores"] = bool_or_null(k.tensor_cores);
  j["calls"] = k.calls;
  j["total_ms"] = num(k.total_ms);
  j["pct_of_busy"] = num(k.pct_of_busy);
  return j;
}

Json live_stat_json(const std::optional<LiveStat>& s) {
  if (!s) return nullptr;
  return Json{{"mean", num(s->mean)}, {"p95", num(s->p95)}, {"max", num(s->max)}};
}

Json live_json(const LiveSummary& l) {
  Json j;
  j["recording"] = l.recording;
  j["command"] = l.command;
  j["exit_code"] = l.exit_code ? Json(*l.exit_code) : Json(nullptr);
  j["complete"] = l.complete;
  j["duration_s"] = num(l.duration_s);
  j["ticks"] = l.ticks;
  j["interval_ms"] = num(l.interval_ms);
  j["gpu_note"] = str_or_null(l.gpu_note);
  j["gpu_unavailable"] = str_or_null(l.gpu_unavailable);
  Json gpus = Json::array();
  for (const LiveGpu& g : l.gpus) {
    Json reasons = Json::object();
    for (const auto& [name, share] : g.clock_reasons) reasons[name] = num(share);
    gpus.push_back(Json{{"index", g.index},
                        {"name", str_or_null(g.name)},
                        {"used", g.used},
                        {"active_s", num(g.active_s)},
                        {"first_work_s", num(g.first_work_s)},
                        {"util_pct", live_stat_json(g.util_pct)},
                        {"sm_active_pct", live_stat_json(g.sm_active_pct)},
                        {"sm_occupancy_pct", live_stat_json(g.sm_occupancy_pct)},
                        {"tensor_active_pct", live_stat_json(g.tensor_active_pct)},
                        {"dram_active_pct", live_stat_json(g.dram_active_pct)},
                        {"pcie_rx_bytes_per_s", live_stat_json(g.pcie_rx_bytes_per_s)},
                        {"pcie_tx_bytes_per_s", live_stat_json(g.pcie_tx_bytes_per_s)},
                        {"power_w", live_stat_json(g.power_w)},
                        {"power_limit_w", num(g.power_limit_w)},
                        {"sm_clock_mhz", live_stat_json(g.sm_clock_mhz)},
                        {"memory_used_max_bytes", num(g.memory_used_max_bytes)},
                        {"memory_total_bytes", num(g.memory_total_bytes)},
                        {"pcie_link", Json{{"gen_seen", num(g.link_gen_seen)},
                                           {"width_seen", num(g.link_width_seen)},
                                           {"gen_max", num(g.link_gen_max)},
                                           {"width_max", num(g.link_width_max)}}},
                        {"clock_event_reasons_share", std::move(reasons)}});
  }
  j["gpus"] = std::move(gpus);
  const LiveHost& h = l.host;
  j["host"] = Json{{"cpus", h.cpus},
                   {"user_pct", live_stat_json(h.user_pct)},
                   {"system_pct", live_stat_json(h.system_pct)},
                   {"iowait_pct", live_stat_json(h.iowait_pct)},
                   {"steal_pct", live_stat_json(h.steal_pct)},
                   {"procs_running", live_stat_json(h.procs_running)},
                   {"ctx_switches_per_s", live_stat_json(h.ctx_switches_per_s)},
                   {"swap_in_pages_per_s", live_stat_json(h.swap_in_pages_per_s)},
                   {"swap_out_pages_per_s", live_stat_json(h.swap_out_pages_per_s)},
                   {"psi_cpu_some_avg10", live_stat_json(h.psi_cpu_some)},
                   {"psi_memory_some_avg10", live_stat_json(h.psi_memory_some)},
                   {"psi_io_some_avg10", live_stat_json(h.psi_io_some)}};
  j["processes_seen"] = l.processes_seen;
  j["tree_cpu_pct_mean"] = num(l.tree_cpu_pct_mean);
  Json procs = Json::array();
  for (const LiveProcess& p : l.top_processes) {
    procs.push_back(Json{{"pid", p.pid},
                         {"comm", p.comm},
                         {"role", p.role},
                         {"cpu_pct", live_stat_json(p.cpu_pct)},
                         {"threads_running_mean", num(p.threads_running_mean)},
                         {"threads_seen", p.threads_seen}});
  }
  j["top_processes"] = std::move(procs);
  return j;
}

}  // namespace

Json report_to_json(const Report& r, bool timings) {
  Json j;
  j["schema"] = kSchema;
  j["tool"] = Json{{"name", "chokepoint"}, {"version", r.tool_version}};

  Json inputs = Json::array();
  for (const InputInfo& in : r.inputs) {
    inputs.push_back(Json{{"path", in.path},
                          {"format", str_or_null(in.format)},
                          {"bytes", in.bytes},
                          {"events", int_or_null(in.events)}});
  }
  j["inputs"] = std::move(inputs);

  j["device"] = device_json(r.devices.empty() ? DeviceInfo{} : r.devices[0]);
  if (r.devices.size() > 1) {
    Json devices = Json::array();
    for (const DeviceInfo& d : r.devices) devices.push_back(device_json(d));
    j["devices"] = std::move(devices);
  }

  j["window"] = window_json(r.window);
  j["breakdown"] = breakdown_json(r.breakdown, !no_gpu(r));
  j["verdict"] = Json{{"bound", rules::category_name(r.verdict.bound)},
                      {"confidence", num(r.verdict.confidence)},
                      {"summary", r.verdict.summary},
                      {"unknown_reason", str_or_null(r.verdict.unknown_reason)},
                      {"data_lost", nullptr}};
  if (const auto& l = r.verdict.data_lost) {
    j["verdict"]["data_lost"] = Json{
        {"what", l->what}, {"lost", l->lost}, {"total", l->total}, {"share", num(l->share())}};
  }

  Json findings = Json::array();
  for (const rules::Finding& f : r.findings) findings.push_back(finding_json(f));
  j["findings"] = std::move(findings);
  Json remedies = Json::array();
  for (const rules::RemedyAdvice& a : r.remedies) remedies.push_back(remedy_json(a));
  j["remedies"] = std::move(remedies);
  j["already_on"] = r.already_on;  // remedy ids the trace shows in place, not advised
  Json what_ifs = Json::array();
  for (const rules::RemedyAdvice& a : r.what_ifs) {
    what_ifs.push_back(Json{{"id", a.id},
                            {"estimated_speedup", num(a.estimated_speedup)},
                            {"estimated_speedup_range", range_json(a.estimated_speedup, a.speedup_range_end)},
                            {"step_ms_before", num(a.step_ms_before)},
                            {"step_ms_after", num(a.step_ms_after)},
                            {"what_changes", str_or_null(a.what_changes)}});
  }
  j["what_ifs"] = std::move(what_ifs);

  Json kernels = Json::array();
  for (const KernelRow& k : r.top_kernels) kernels.push_back(kernel_json(k));
  j["top_kernels"] = std::move(kernels);
  Json roof = Json::array();
  for (const RooflineClass& c : r.roofline) roof.push_back(roofline_json(c));
  j["roofline"] = std::move(roof);
  j["mfu_pct"] = num(r.mfu_pct);
  j["mfu_precision"] = str_or_null(r.mfu_precision);
  if (r.replay) {
    j["replay"] = Json{{"steps", r.replay->steps},
                       {"recorded_step_ms", num(r.replay->recorded_step_ms)},
                       {"replayed_step_ms", num(r.replay->replayed_step_ms)},
                       {"plain_step_ms", num(r.replay->plain_step_ms)},
                       {"recorder", str_or_null(r.replay->recorder)}};
  }

  Json stats = Json::array();
  for (const timeline::ImportStat& s : r.import_stats) {
    stats.push_back(Json{
        {"name", s.name}, {"severity", severity_name(s.severity)}, {"description", s.description}, {"count", s.count}});
  }
  j["import_stats"] = std::move(stats);
  if (timings) j["analysis_seconds"] = num(r.analysis_seconds);
  if (r.live) j["live"] = live_json(*r.live);
  if (r.distributed) j["distributed"] = distributed_json(*r.distributed, timings);
  if (r.host) {
    const analyses::HostAttribution& h = *r.host;
    Json spots = Json::array();
    for (const analyses::HotSpot* p : analyses::spots_to_show(h, 20, 5)) {
      const analyses::HotSpot& s = *p;
      spots.push_back(Json{
          {"file", s.frame.file},
          {"line", s.frame.line},
          {"function", s.frame.function},
          {"text", s.text},
          {"inner", s.inner},
          {"class", std::string(analyses::host_class_name(s.cls))},
          {"gpu_idle_s", num(s.idle_s)},
          {"on_thread_s", num(s.on_thread_s)},
          {"own_gpu_idle_s", num(s.own_idle_s)},
          {"own_on_thread_s", num(s.own_on_thread_s)},
          {"idle_ms_per_step", r.host_steps > 0 ? num(1e3 * s.idle_s / static_cast<double>(r.host_steps)) : Json()}});
    }
    Json by_class = Json::object();
    for (int c = 0; c < analyses::kNumHostClasses; ++c) {
      by_class[std::string(analyses::host_class_name(static_cast<analyses::HostClass>(c)))] = num(h.idle_by_class[c]);
    }
    j["host_hotspots"] = Json{{"method", h.method},
                              {"thread", h.thread},
                              {"window_s", num(h.window_s)},
                              {"gpu_idle_s", num(h.gpu_idle_s)},
                              {"covered_idle_s", num(h.covered_idle_s)},
                              {"steps", r.host_steps},
                              {"idle_s_by_class", by_class},
                              {"spots", spots}};
  } else if (!r.stacks_note.empty()) {
    j["host_hotspots"] = Json{{"note", r.stacks_note}};
  }
  if (!r.fingerprint.empty()) j["fingerprint"] = fingerprint_json(r.fingerprint);
  return j;
}

Status JsonReporter::write(const Report& r, std::ostream& out, const RenderOptions& opts) const {
  // Kernel and file names come from the trace and may hold invalid UTF-8; replace those
  // bytes instead of letting dump() throw.
  out << report_to_json(r, opts.timings).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  if (!out) return Status::Error("writing the JSON report failed");
  return Status::Ok();
}

}  // namespace chokepoint::report
