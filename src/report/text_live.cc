// The text report's sections about a recording (`chokepoint run`, `watch`): its header
// (the command, the devices), what the samples show, and where the GPU waits by line of
// the job's Python code (text_writer.h).
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/format_util.h"
#include "report/text_writer.h"

namespace chokepoint::report::text {

namespace {

// A frame's file without its directory; "(library code only)" for no frame of the job's.
std::string short_file(const std::string& file) {
  if (file.empty()) return "(library code only)";
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

}  // namespace

void TextWriter::live_header() {
  const LiveSummary& l = *r_.live;
  std::vector<std::string> items = {l.recording, format_seconds(l.duration_s),
                                    fmt::format("{} ticks at {} ms", l.ticks, format_number(l.interval_ms))};
  if (!l.complete) items.push_back("incomplete");
  field("recording", items);
  if (!l.command.empty()) {
    std::string cmd;
    for (const std::string& a : l.command) cmd += (cmd.empty() ? "" : " ") + a;
    std::vector<std::string> c = {cmd};
    if (l.exit_code) c.push_back(fmt::format("exit code {}", *l.exit_code));
    field("command", c);
  }
  for (const LiveGpu& g : l.gpus) {
    std::vector<std::string> items2 = {fmt::format("GPU{} {}", g.index, g.name.empty() ? "unknown" : g.name)};
    if (g.memory_total_bytes) items2.push_back(format_bytes(static_cast<int64_t>(*g.memory_total_bytes)));
    items2.push_back(g.used ? "used by the workload" : "not used by the workload");
    field("device", items2);
  }
  if (!l.gpu_unavailable.empty()) field("device", {"GPU metrics unavailable: " + l.gpu_unavailable});
  if (!l.gpu_note.empty()) field("GPU match", {l.gpu_note});
  if (r_.window.steps > 0) step_fields();  // counted in Python stack samples
  out_ << '\n';
}

// Where the GPU waits, by line of the job's Python code (py-spy stacks).
void TextWriter::host_section() {
  if (!r_.host) {
    if (r_.live && !r_.stacks_note.empty()) field("Python stacks", {r_.stacks_note});
    return;
  }
  const analyses::HostAttribution& h = *r_.host;
  if (h.no_gpu_work()) {
    no_gpu_host_section(h);
    return;
  }
  out_ << style_(Tone::kBold, "Where the GPU waits (Python stacks)") << '\n';
  field("idle", {fmt::format("GPU idle {} of {} ({})", format_pct(h.window_s > 0 ? 100 * h.gpu_idle_s / h.window_s : 0),
                             format_seconds(h.window_s), h.method == "trace" ? "trace" : "sampled utilization"),
                 fmt::format("stacks of {} cover {}", h.thread,
                             format_pct(h.gpu_idle_s > 0 ? 100 * h.covered_idle_s / h.gpu_idle_s : 0))});
  auto per_step = [&](double seconds) {
    return r_.host_steps > 0 ? format_ms(1e3 * seconds / static_cast<double>(r_.host_steps)) + "/step"
                             : format_ms(h.window_s > 0 ? 1e3 * seconds / h.window_s : 0) + "/s";
  };
  for (const analyses::HotSpot* p : analyses::spots_to_show(h, 6, 2)) {
    const analyses::HotSpot& s = *p;
    const std::string file = short_file(s.frame.file);
    const std::string per = r_.host_steps > 0
                                ? format_ms(1e3 * s.idle_s / static_cast<double>(r_.host_steps)) + "/step"
                                : format_pct(h.gpu_idle_s > 0 ? 100 * s.idle_s / h.gpu_idle_s : 0) + " of idle";
    std::vector<std::string> items = {fmt::format("{}:{} {}()", file, s.frame.line, s.frame.function),
                                      std::string(analyses::host_class_name(s.cls)), per};
    if (analyses::own_time_shown(h, s)) items.push_back("runs itself " + per_step(s.own_on_thread_s));
    if (!s.text.empty()) items.push_back("`" + s.text + "`");
    field("", items);
  }
  out_ << '\n';
}

// No GPU work to wait: where the launching thread's time went, by line (issue 42).
void TextWriter::no_gpu_host_section(const analyses::HostAttribution& h) {
  out_ << style_(Tone::kBold, "Where the host's time goes (Python stacks)") << '\n';
  field("window", {fmt::format("no GPU work in {}: time on {}, by line", format_seconds(h.window_s), h.thread)});
  for (const analyses::HotSpot* p : analyses::spots_to_show(h, 6, 2)) {
    const analyses::HotSpot& s = *p;
    std::vector<std::string> items = {
        fmt::format("{}:{} {}()", short_file(s.frame.file), s.frame.line, s.frame.function),
        std::string(analyses::host_class_name(s.cls)), format_pct(100 * s.on_thread_s / h.window_s) + " of the run"};
    if (!s.text.empty()) items.push_back("`" + s.text + "`");
    field("", items);
  }
  out_ << '\n';
}

// What the samples show: GPU activity over its active window, host and processes.
void TextWriter::live_section() {
  const LiveSummary& l = *r_.live;
  out_ << style_(Tone::kBold, "What the samples show") << '\n';
  auto m = [](const std::optional<LiveStat>& s, const char* unit) -> std::string {
    if (!s) return "-";
    return fmt::format("{}{} (p95 {}{})", format_number(s->mean), unit, format_number(s->p95), unit);
  };
  auto rate = [](const std::optional<LiveStat>& s) -> std::string {
    if (!s) return "-";
    return fmt::format("{}/s (p95 {}/s)", format_bytes(static_cast<int64_t>(s->mean)),
                       format_bytes(static_cast<int64_t>(s->p95)));
  };
  for (const LiveGpu& g : l.gpus) {
    field(
        fmt::format("GPU{}", g.index),
        {g.first_work_s ? fmt::format("active {} from {}", format_seconds(g.active_s), format_seconds(*g.first_work_s))
                        : fmt::format("active {}", format_seconds(g.active_s)),
         "util " + m(g.util_pct, "%"), "SM " + m(g.sm_active_pct, "%"), "tensor " + m(g.tensor_active_pct, "%"),
         "DRAM " + m(g.dram_active_pct, "%"), "occupancy " + m(g.sm_occupancy_pct, "%")});
    std::vector<std::string> more = {"PCIe rx " + rate(g.pcie_rx_bytes_per_s), "tx " + rate(g.pcie_tx_bytes_per_s)};
    if (g.memory_used_max_bytes && g.memory_total_bytes) {
      more.push_back(fmt::format("memory peak {} of {}", format_bytes(static_cast<int64_t>(*g.memory_used_max_bytes)),
                                 format_bytes(static_cast<int64_t>(*g.memory_total_bytes))));
    }
    if (g.power_w) {
      more.push_back(fmt::format("power {} W{}", format_number(g.power_w->mean),
                                 g.power_limit_w ? " of " + format_number(*g.power_limit_w) + " W" : ""));
    }
    if (g.sm_clock_mhz) more.push_back(fmt::format("SM clock {} MHz", format_number(g.sm_clock_mhz->mean)));
    for (const auto& [name, share] : g.clock_reasons)
      more.push_back(fmt::format("{} {}", name, format_pct(100 * share)));
    field("", more);
  }
  const LiveHost& h = l.host;
  field("host",
        {fmt::format("{} CPUs", h.cpus), "user " + m(h.user_pct, "%"), "system " + m(h.system_pct, "%"),
         "iowait " + m(h.iowait_pct, "%"), "steal " + m(h.steal_pct, "%"), "run queue " + m(h.procs_running, ""),
         "swap in/out " + m(h.swap_in_pages_per_s, "") + " / " + m(h.swap_out_pages_per_s, "") + " pages/s",
         "PSI cpu " + m(h.psi_cpu_some, "%"), "PSI io " + m(h.psi_io_some, "%")});
  if (l.processes_seen > 0) {
    field("processes", {fmt::format("{} seen", l.processes_seen),
                        fmt::format("tree CPU {} of one core (sum of means)", format_pct(l.tree_cpu_pct_mean))});
    for (const LiveProcess& p : l.top_processes) {
      std::vector<std::string> items = {fmt::format("{} {}", p.pid, p.comm), p.role, "CPU " + m(p.cpu_pct, "%")};
      if (p.threads_running_mean)
        items.push_back(fmt::format("{} threads running", format_number(*p.threads_running_mean)));
      field("", items);
    }
  }
  category_costs();
  out_ << '\n';
}

}  // namespace chokepoint::report::text
