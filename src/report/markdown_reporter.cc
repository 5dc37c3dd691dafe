#include "report/markdown_reporter.h"

#include "report/distributed_render.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "report/format_util.h"
#include "report/kernel_name.h"

namespace chokepoint::report {
namespace {

// Kernel names in tables: long enough to tell kernels apart, short enough that the
// table does not scroll sideways on GitHub.
constexpr size_t kKernelNameWidth = 72;

// Escapes Markdown in prose from the report (titles, summaries, recommendations) while
// leaving `code spans` as written: rules quote code in backticks, and inside a span
// every character is literal. '<' would otherwise open an HTML tag and swallow text
// such as "std::vector<float>", '_' and '*' would turn "DataLoader.__next__" bold, and
// '|' would end a table cell (GitHub needs "\|" even inside a code span there). Control
// characters from the input are escapes first (base/terminal_text.h): a Markdown report
// is read in a terminal too (`cat`, `less -R`, a pager).
std::string escape(std::string_view text, bool in_table = false) {
  const std::string s = escape_controls(text);
  std::string out;
  bool in_code = false;
  for (char c : s) {
    if (c == '`') in_code = !in_code;
    if (c == '|' && in_table) {
      out += "\\|";
    } else if (c == '\n') {
      out += in_table ? " " : "  \n";  // a hard line break; a cell is one line
    } else if (!in_code && (c == '<' || c == '*' || c == '_' || c == '\\' || c == '[' || c == ']')) {
      out += c == '<' ? std::string("&lt;") : std::string("\\") + c;
    } else {
      out += c;
    }
  }
  return out;
}

// A code span around text that may itself contain backticks: the fence is one backtick
// longer than the longest run inside (CommonMark), with spaces when the text starts or
// ends with one; in a table cell '|' still needs its backslash. Control characters are
// escapes (base/terminal_text.h).
std::string code(std::string_view text, bool in_table = false) {
  const std::string s = escape_controls(text);
  size_t longest = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
  std::string out = fence + (pad ? " " : "");
  for (char c : s) {
    if (c == '|' && in_table) out += '\\';
    out += c;
  }
  return out + (pad ? " " : "") + fence;
}

const char* severity_badge(Severity s) {
  switch (s) {
    case Severity::kCritical: return "🔴 critical";
    case Severity::kWarning: return "🟡 warning";
    case Severity::kInfo: return "🔵 info";
  }
  return "🔵 info";
}

const char* stat_badge(Severity s) {
  switch (s) {
    case Severity::kCritical: return "🔴";
    case Severity::kWarning: return "⚠️";
    case Severity::kInfo: return "ℹ️";
  }
  return "ℹ️";
}

void header(const Report& r, std::ostream& out) {
  out << "# chokepoint report\n\n";
  out << fmt::format("**Bound by: {}** — confidence {:.2f}\n\n", category_label(r.verdict.bound), r.verdict.confidence);
  if (!r.verdict.summary.empty()) out << "> " << escape(r.verdict.summary) << "\n\n";
  if (r.verdict.data_lost && r.verdict.bound != rules::Category::kUnknown) {
    out << "Confidence lowered by the data lost: " << escape(data_lost_text(*r.verdict.data_lost)) << ".\n\n";
  }

  for (const InputInfo& in : r.inputs) {
    std::string v = in.format.empty() ? "" : escape(in.format) + ", ";
    v += format_bytes(static_cast<int64_t>(in.bytes));
    if (in.events >= 0) v += ", " + format_count(in.events) + " events";
    out << "- **Input:** " << code(in.path) << " (" << v << ")\n";
  }
  std::vector<std::string> shown;
  for (const DeviceInfo& d : r.devices) {
    std::string v = d.name.empty() ? "unknown GPU" : escape(d.name);
    if (d.num_sms > 0) v += fmt::format(", {} SMs", d.num_sms);
    if (d.memory_bytes > 0) v += ", " + format_bytes(d.memory_bytes);
    if (!d.compute_capability.empty()) v += ", compute " + escape(d.compute_capability);
    if (!d.ceilings.source.empty()) v += ", ceilings " + code(d.ceilings.source);
    // The same GPU in each input (windows of one process, runs of one job) is one line.
    if (std::find(shown.begin(), shown.end(), v) != shown.end()) continue;
    shown.push_back(v);
    out << "- **Device:** " << v << '\n';
    if (!d.ceilings.note.empty()) out << "  - " << escape(d.ceilings.note) << '\n';
    if (!d.ceilings.missing_hint.empty()) out << "  - " << escape(d.ceilings.missing_hint) << '\n';
  }
  const Window& w = r.window;
  out << fmt::format("- **Steps:** {}", w.steps);
  if (!w.step_source.empty()) out << " (" << escape(w.step_source) << ")";
  if (w.steps > 0) {
    out << " · step time mean " << format_ms(w.step_time_ms.mean) << ", p50 " << format_ms(w.step_time_ms.p50)
        << ", p95 " << format_ms(w.step_time_ms.p95);
  }
  out << '\n';
  for (const ProfilerWindow& pw : w.profiler_windows) out << "  - Window " << escape(profiler_window_text(pw)) << '\n';
  out << '\n';
}

void breakdown(const Report& r, std::ostream& out) {
  const Breakdown& b = r.breakdown;
  out << "## Where the step time goes\n\n";
  if (no_gpu(r)) {  // not "GPU busy 0%, idle 100%": there was no GPU to be idle
    out << "No GPU in the input.\n\n";
    return;
  }
  out << "| Time | % of step | ms / step |\n|---|---:|---:|\n";
  const std::optional<double> busy_ms = gpu_ms_per_step(r.window, b.gpu_busy_pct);
  const std::optional<double> idle_ms = gpu_ms_per_step(r.window, b.gpu_idle_pct);
  double max_ms = std::max(busy_ms.value_or(0), idle_ms.value_or(0));
  for (const auto* shares : {&b.idle_by_cause, &b.busy_by_class}) {
    for (const Share& s : *shares) max_ms = std::max(max_ms, s.ms_per_step);
  }
  const int decimals = column_decimals(max_ms);
  auto row = [&](const std::string& label, double pct, std::optional<double> ms) {
    out << "| " << label << " | " << format_pct(pct) << " | " << (ms ? format_decimal(*ms, decimals) : std::string())
        << " |\n";
  };
  row("**GPU busy**", b.gpu_busy_pct, busy_ms);
  row("**GPU idle**", b.gpu_idle_pct, idle_ms);
  for (const Share& s : sorted_by_pct(b.idle_by_cause)) {
    row("idle: " + escape(humanize(s.name), true), s.pct, s.ms_per_step);
  }
  for (const Share& s : sorted_by_pct(b.busy_by_class)) {
    row("busy: " + escape(humanize(s.name), true), s.pct, s.ms_per_step);
  }
  const std::vector<Share> costs = sorted_by_pct(b.category_costs);
  if (!costs.empty()) {
    out << "\nCost by category: ";
    for (size_t i = 0; i < costs.size(); ++i) {
      out << (i ? " · " : "") << escape(costs[i].name) << " " << format_pct(costs[i].pct);
    }
    out << '\n';
  }
  out << '\n';
}

std::string md_stat(const std::optional<LiveStat>& s, const char* unit) {
  if (!s) return "–";
  return format_number(s->mean) + unit + " (p95 " + format_number(s->p95) + unit + ")";
}

// The live section: a table per GPU, the host, the busiest processes.
void live(const Report& r, std::ostream& out) {
  const LiveSummary& l = *r.live;
  out << "## What the samples show\n\n";
  out << fmt::format("- **Recording:** {} · {} · {} ticks at {} ms{}\n", code(l.recording),
                     format_seconds(l.duration_s), l.ticks, format_number(l.interval_ms),
                     l.complete ? "" : " · incomplete");
  if (!l.command.empty()) {
    std::string cmd;
    for (const std::string& a : l.command) cmd += (cmd.empty() ? "" : " ") + a;
    out << "- **Command:** " << code(cmd);
    if (l.exit_code) out << " (exit code " << *l.exit_code << ")";
    out << '\n';
  }
  if (!l.gpu_unavailable.empty()) out << "- **GPU metrics unavailable:** " << escape(l.gpu_unavailable) << '\n';
  if (!l.gpu_note.empty()) out << "- **GPU match:** " << escape(l.gpu_note) << '\n';
  if (const Window& w = r.window; w.steps > 0) {  // counted in Python stack samples
    out << fmt::format("- **Steps:** {} ({}) · step time mean {}, p50 {}, p95 {}\n", w.steps, escape(w.step_source),
                       format_ms(w.step_time_ms.mean), format_ms(w.step_time_ms.p50), format_ms(w.step_time_ms.p95));
  }
  out << '\n';
  if (!l.gpus.empty()) {
    out << "| GPU | used | active | util | SM | tensor | DRAM | memory peak | power |\n"
           "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const LiveGpu& g : l.gpus) {
      out << "| " << g.index << ' ' << escape(g.name, true) << " | " << (g.used ? "yes" : "no") << " | "
          << format_seconds(g.active_s) << (g.first_work_s ? " from " + format_seconds(*g.first_work_s) : "") << " | "
          << md_stat(g.util_pct, "%") << " | " << md_stat(g.sm_active_pct, "%") << " | "
          << md_stat(g.tensor_active_pct, "%") << " | " << md_stat(g.dram_active_pct, "%") << " | "
          << (g.memory_used_max_bytes ? format_bytes(static_cast<int64_t>(*g.memory_used_max_bytes)) : "–") << " | "
          << (g.power_w ? format_number(g.power_w->mean) + " W" : "–") << " |\n";
    }
    out << '\n';
  }
  const LiveHost& h = l.host;
  out << "- **Host:** " << h.cpus << " CPUs · user " << md_stat(h.user_pct, "%") << " · system "
      << md_stat(h.system_pct, "%") << " · iowait " << md_stat(h.iowait_pct, "%") << " · steal "
      << md_stat(h.steal_pct, "%") << " · run queue " << md_stat(h.procs_running, "") << "\n\n";
  if (!l.top_processes.empty()) {
    out << "| PID | process | role | CPU (100 = one core) |\n|---:|---|---|---:|\n";
    for (const LiveProcess& p : l.top_processes) {
      out << "| " << p.pid << " | " << escape(p.comm, true) << " | " << escape(p.role, true) << " | "
          << md_stat(p.cpu_pct, "%") << " |\n";
    }
    out << '\n';
  }
}

void finding(size_t rank, const rules::Finding& f, std::ostream& out, bool live_report) {
  out << fmt::format("### {}. {} — {}\n\n", rank, code(f.id), escape(f.title));
  out << "**" << severity_badge(f.severity) << "** · " << rules::category_name(f.category) << " · ";
  if (f.estimated_speedup) {
    out << "est. **" << format_speedup_range(*f.estimated_speedup, f.speedup_range_end) << "**"
        << (f.estimate_remedy.empty()
                ? std::string()
                : (rules::estimate_is_throughput(f.estimate_remedy) ? " samples/s with " : " with ") +
                      code(f.estimate_remedy));
  } else {
    out << "speedup not estimated";
  }
  out << " · " << format_pct(f.time_share_pct) << (live_report ? " of the run\n\n" : " of step time\n\n");
  if (!f.detail.empty()) out << escape(f.detail) << "\n\n";
  if (!f.evidence.empty()) {
    out << "| Evidence | Value | Threshold |\n|---|---:|---:|\n";
    for (const rules::Evidence& e : f.evidence) {
      out << "| " << escape(humanize(e.metric), true) << " | " << escape(format_value(e.value, e.unit), true) << " | "
          << escape(format_threshold(e), true) << " |\n";
    }
    out << '\n';
  }
  if (!f.recommendation.empty()) out << "**Fix:** " << escape(f.recommendation) << "\n\n";
}

void remedies(const Report& r, std::ostream& out) {
  if (const std::string on = already_on_text(r); !on.empty()) {
    out << "_Already in place (the trace shows it, so it is not advised): " << escape(on) << "._\n\n";
  }
  if (r.remedies.empty()) return;
  out << "## What to change\n\n_" << kRemedyOrder << "._\n\n| # | Remedy | Estimate | Removes |\n|---:|---|---|---|\n";
  for (size_t i = 0; i < r.remedies.size(); ++i) {
    const rules::RemedyAdvice& a = r.remedies[i];
    std::string est = "not estimated";
    if (a.estimated_speedup) {
      est = (a.estimate_from == "upper bound" ? "up to " : "") +
            format_speedup_range(*a.estimated_speedup, a.speedup_range_end) +
            (a.id == "bigger-batch" ? " samples/s" : "");
      if (a.estimate_from == "trace what-if") {
        est += " (" + format_number(a.step_ms_before) + " → " + format_number(a.step_ms_after) + " ms/step)";
      }
    }
    std::string removes;
    for (const auto& id : a.findings) removes += (removes.empty() ? "" : ", ") + code(id, true);
    out << "| " << i + 1 << " | **" << escape(a.title, true) << "**: " << escape(a.change, true) << " | " << est
        << " | " << removes << " |\n";
  }
  out << '\n';
  for (const rules::RemedyAdvice& a : r.remedies) {
    if (a.assumptions.empty()) continue;
    out << "<details><summary>" << code(a.id) << ": what the estimate assumes</summary>\n\n";
    if (!a.what_changes.empty()) out << "- Replay: " << escape(a.what_changes) << '\n';
    for (const auto& s : a.assumptions) out << "- " << escape(s) << '\n';
    out << "\n</details>\n\n";
  }
}

void roofline(const Report& r, std::ostream& out) {
  if (r.roofline.empty()) return;
  out << "## Roofline by kernel class\n\n| Class | ms/step | % of step | TFLOP/s (% peak) | GB/s (% HBM) | Bound |\n"
         "|---|---:|---:|---:|---:|---|\n";
  for (const RooflineClass& c : r.roofline) {
    const std::string tf = c.achieved_tflops ? format_number(*c.achieved_tflops) +
                                                   (c.pct_of_peak ? " (" + format_pct(*c.pct_of_peak) + ")" : "")
                                             : "";
    const std::string gb = c.achieved_gbps ? format_number(*c.achieved_gbps) +
                                                 (c.pct_of_hbm ? " (" + format_pct(*c.pct_of_hbm) + ")" : "")
                                           : "";
    out << "| " << escape(c.kernel_class, true) << " | " << format_number(c.ms_per_step) << " | "
        << format_pct(c.pct_of_step) << " | " << tf << " | " << gb << " | " << escape(c.bound, true) << " |\n";
  }
  out << '\n';
  if (r.mfu_pct) out << "MFU: " << format_pct(*r.mfu_pct) << " of the " << escape(r.mfu_precision) << " peak.\n\n";
}

void top_kernels(const Report& r, std::ostream& out) {
  if (r.top_kernels.empty()) return;
  out << "## Top kernels\n\n";
  out << "| # | Kernel | Class | Precision | Tensor cores | Calls | Total ms | % of busy |\n"
         "|---:|---|---|---|---|---:|---:|---:|\n";
  double max_ms = 0;
  for (const KernelRow& k : r.top_kernels) max_ms = std::max(max_ms, k.total_ms);
  const int decimals = column_decimals(max_ms);
  std::vector<std::string> names;
  for (const KernelRow& k : r.top_kernels) names.push_back(k.name);
  const std::vector<std::string> shown = distinct_kernel_names(names, kKernelNameWidth);
  for (size_t i = 0; i < r.top_kernels.size(); ++i) {
    const KernelRow& k = r.top_kernels[i];
    const char* tc = !k.tensor_cores ? "" : *k.tensor_cores ? "yes" : "no";
    out << "| " << i + 1 << " | " << code(shown[i], true) << " | " << escape(k.kernel_class, true) << " | "
        << escape(k.precision, true) << " | " << tc << " | " << format_count(k.calls) << " | "
        << format_decimal(k.total_ms, decimals) << " | " << format_pct(k.pct_of_busy) << " |\n";
  }
  out << '\n';
}

void import_stats(const Report& r, std::ostream& out) {
  if (r.import_stats.empty()) return;
  out << "## Import warnings\n\n";
  for (const timeline::ImportStat& s : r.import_stats) {
    out << "- " << stat_badge(s.severity) << ' ' << code(s.name) << " (" << severity_name(s.severity) << ", x"
        << format_count(s.count) << "): " << escape(s.description) << '\n';
  }
  out << '\n';
}

// Where the GPU waits, by line of the job's Python code (py-spy or a with_stack trace).
void host_hotspots(const Report& r, std::ostream& out) {
  if (!r.host) {
    if (r.live && !r.stacks_note.empty()) out << "Python stacks: " << escape(r.stacks_note) << "\n\n";
    return;
  }
  const analyses::HostAttribution& h = *r.host;
  if (h.no_gpu_work()) {  // no GPU work to wait: where the host's time went (issue 42)
    out << "## Where the host's time goes (Python stacks)\n\n";
    out << fmt::format("No GPU work in {}: time on {}, by line.\n\n", format_seconds(h.window_s), escape(h.thread));
    out << "| Line | Function | Class | Of the run | Code |\n|---|---|---|---:|---|\n";
    for (const analyses::HotSpot* p : analyses::spots_to_show(h, 10, 3)) {
      const analyses::HotSpot& s = *p;
      out << "| " << code(fmt::format("{}:{}", s.frame.file, s.frame.line), true) << " | "
          << code(s.frame.function, true) << " | " << analyses::host_class_name(s.cls) << " | "
          << format_pct(100 * s.on_thread_s / h.window_s) << " | "
          << (s.text.empty() ? std::string() : code(s.text, true)) << " |\n";
    }
    out << '\n';
    return;
  }
  out << "## Where the GPU waits (Python stacks)\n\n";
  out << fmt::format("GPU idle {} of {} ({}); the stacks of {} cover {} of it.\n\n",
                     format_pct(h.window_s > 0 ? 100 * h.gpu_idle_s / h.window_s : 0), format_seconds(h.window_s),
                     h.method == "trace" ? "from the trace" : "from sampled utilization", escape(h.thread),
                     format_pct(h.gpu_idle_s > 0 ? 100 * h.covered_idle_s / h.gpu_idle_s : 0));
  out << "| Line | Function | Class | GPU idle | Runs itself | Code |\n|---|---|---|---:|---:|---|\n";
  for (const analyses::HotSpot* p : analyses::spots_to_show(h, 10, 3)) {
    const analyses::HotSpot& s = *p;
    const std::string idle = r.host_steps > 0 ? format_ms(1e3 * s.idle_s / static_cast<double>(r.host_steps)) + "/step"
                                              : format_pct(h.gpu_idle_s > 0 ? 100 * s.idle_s / h.gpu_idle_s : 0);
    const std::string own = !analyses::own_time_shown(h, s) ? ""
                            : r.host_steps > 0
                                ? format_ms(1e3 * s.own_on_thread_s / static_cast<double>(r.host_steps)) + "/step"
                                : format_pct(100 * s.own_on_thread_s / h.window_s) + " of the window";
    out << "| " << code(fmt::format("{}:{}", s.frame.file, s.frame.line), true) << " | " << code(s.frame.function, true)
        << " | " << analyses::host_class_name(s.cls) << " | " << idle << " | " << own << " | "
        << (s.text.empty() ? std::string() : code(s.text, true)) << " |\n";
  }
  out << '\n';
}

}  // namespace

Status MarkdownReporter::write(const Report& r, std::ostream& out, const RenderOptions& opts) const {
  header(r, out);
  remedies(r, out);
  if (r.distributed) distributed_markdown(*r.distributed, out);
  if (r.live) live(r, out);
  if (!r.live || !r.breakdown.idle_by_cause.empty()) breakdown(r, out);
  roofline(r, out);
  host_hotspots(r, out);
  out << "## Findings\n\n";
  if (r.findings.empty()) out << "None: no rule fired on this input.\n\n";
  for (size_t i = 0; i < r.findings.size(); ++i) finding(i + 1, r.findings[i], out, r.live.has_value());
  top_kernels(r, out);
  import_stats(r, out);
  out << "_chokepoint " << r.tool_version;
  if (opts.timings) out << " · analysis took " << format_seconds(r.analysis_seconds);
  out << "_\n";
  if (!out) return Status::Error("writing the Markdown report failed");
  return Status::Ok();
}

}  // namespace chokepoint::report
