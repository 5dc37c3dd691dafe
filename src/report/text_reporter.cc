#include "report/text_reporter.h"

#include "report/distributed_render.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "report/format_util.h"
#include "report/kernel_name.h"
#include "report/text_layout.h"

namespace chokepoint::report {
namespace {

// Every string of the report that comes from the input (names of kernels, devices,
// files, processes, the command line; prose that quotes them) goes through here on its
// way to the terminal: a control character is shown as an escape, never sent.
std::string safe(std::string_view s) { return escape_controls(s); }

// Below this many columns the tables cannot line up; lines overflow instead.
constexpr size_t kMinWidth = 60;
// A ten-second read: the strongest numbers of a finding only (the JSON has all).
constexpr size_t kMaxEvidence = 4;
// Breakdown rows per group; smaller shares fold into one "other" row so that the rows
// still add up to the group's total.
constexpr size_t kMaxShareRows = 6;
constexpr double kMinSharePct = 0.1;
// Column of the values in the header block ("  step time mean 412.3 ms").
constexpr size_t kFieldLabelWidth = 12;
// Indent of everything under a finding's title line.
constexpr std::string_view kFindingIndent = "    ";

struct Row {
  std::string label;
  double pct = 0;
  std::optional<double> ms_per_step;
};

// Breakdown rows of one group, largest first, small ones folded into "other".
// The folded row is labelled "N smaller", not "other": a share may itself be named
// "other" (the kernel class of unclassified kernels), and two rows must not share a label.
// A single folded share keeps its own row.
std::vector<Row> share_rows(const std::vector<Share>& shares) {
  std::vector<Row> rows;
  const std::vector<Share> sorted = sorted_by_pct(shares);
  size_t keep = 0;
  while (keep < sorted.size() && keep < kMaxShareRows && sorted[keep].pct >= kMinSharePct) ++keep;
  if (keep == kMaxShareRows && sorted.size() == keep + 1) ++keep;  // one left over: its own row
  Row rest{"", 0, 0.0};
  for (size_t i = 0; i < sorted.size(); ++i) {
    const Share& s = sorted[i];
    if (i < keep) {
      rows.push_back(Row{safe(humanize(s.name)), s.pct, s.ms_per_step});
    } else {
      rest.pct += s.pct;
      *rest.ms_per_step += s.ms_per_step;
    }
  }
  rest.label = std::to_string(sorted.size() - keep) + " smaller";
  if (rest.pct >= kMinSharePct) rows.push_back(rest);
  return rows;
}

// "   fires ≥ 20.0%" or "   ceiling 4,800 GB/s": the side of the threshold that counts.
std::string threshold_text(const rules::Evidence& e) {
  if (!e.threshold) return "";
  std::string s = "   ";
  if (e.side != rules::ThresholdSide::kCeiling) s += "fires ";
  s += safe(format_threshold(e));
  return s;
}

std::string severity_tag(Severity s) {
  switch (s) {
    case Severity::kCritical: return "[CRITICAL]";
    case Severity::kWarning: return "[WARNING]";
    case Severity::kInfo: return "[INFO]";
  }
  return "[INFO]";
}

Tone severity_tone(Severity s) {
  switch (s) {
    case Severity::kCritical: return Tone::kRed;
    case Severity::kWarning: return Tone::kYellow;
    case Severity::kInfo: return Tone::kCyan;
  }
  return Tone::kCyan;
}

Tone stat_tone(Severity s) {
  switch (s) {
    case Severity::kCritical: return Tone::kRed;
    case Severity::kWarning: return Tone::kYellow;
    case Severity::kInfo: return Tone::kDim;
  }
  return Tone::kDim;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Writes one report; holds the output, the style and the width so that every section
// is a short method.
class TextWriter {
 public:
  TextWriter(const Report& r, std::ostream& out, const RenderOptions& opts)
      : r_(r),
        out_(out),
        style_(opts),
        width_(std::max(kMinWidth, static_cast<size_t>(std::max(opts.width, 0)))),
        timings_(opts.timings) {}

  void write() {
    header();
    verdict();
    remedies();
    if (r_.distributed) distributed_section();
    if (r_.live) live_section();
    if (!r_.live || !r_.breakdown.idle_by_cause.empty() || !r_.breakdown.busy_by_class.empty()) {
      if (!r_.breakdown.idle_by_cause.empty() || !r_.breakdown.busy_by_class.empty() || !r_.live) breakdown();
    }
    roofline();
    host_section();
    findings();
    top_kernels();
    import_stats();
    if (timings_) out_ << style_(Tone::kDim, "analysis took " + format_seconds(r_.analysis_seconds)) << '\n';
  }

 private:
  // Writes `lines`: the first after `prefix`, the others after `indent` spaces.
  void emit(const std::string& prefix, const std::vector<std::string>& lines, size_t indent,
            std::optional<Tone> tone = std::nullopt) {
    for (size_t i = 0; i < lines.size(); ++i) {
      out_ << (i == 0 ? prefix : std::string(indent, ' ')) << (tone ? style_(*tone, lines[i]) : lines[i]) << '\n';
    }
  }

  // Columns left after a prefix of `used` columns; never fewer than a readable minimum.
  size_t room(size_t used) const {
    constexpr size_t kMinLine = 20;
    return width_ > used + kMinLine ? width_ - used : kMinLine;
  }

  // `text` wrapped after `prefix` (which may carry escape codes, so its width comes from
  // `prefix_plain`), continuation lines indented by `indent`.
  void wrapped(const std::string& prefix, std::string_view prefix_plain, std::string_view text, size_t indent,
               std::optional<Tone> tone = std::nullopt) {
    emit(prefix, wrap(safe(text), room(display_width(prefix_plain)), room(indent)), indent, tone);
  }

  // A header line: a dim label, then items joined by " · ", wrapped between items.
  void field(std::string_view label, const std::vector<std::string>& items) {
    const std::string prefix = "  " + pad_right(label, kFieldLabelWidth - 2);
    std::vector<std::string> shown;
    for (const std::string& item : items) shown.push_back(safe(item));
    emit(style_(Tone::kDim, prefix), wrap_items(shown, room(kFieldLabelWidth), room(kFieldLabelWidth)),
         kFieldLabelWidth);
  }

  void live_header() {
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

  void step_fields() {
    const Window& w = r_.window;
    field("steps", {std::to_string(w.steps) + (w.step_source.empty() ? "" : " (" + w.step_source + ")")});
    if (w.steps > 0) {
      field("step time", {"mean " + format_ms(w.step_time_ms.mean), "p50 " + format_ms(w.step_time_ms.p50),
                          "p95 " + format_ms(w.step_time_ms.p95)});
    }
  }

  // The ranks of a distributed job side by side.
  void distributed_section() {
    const DistributedText t = distributed_text(*r_.distributed);
    out_ << style_(Tone::kBold, t.heading) << '\n';
    for (size_t i = 0; i < t.table.size(); ++i) {
      out_ << "  " << (i == 0 ? style_(Tone::kDim, safe(t.table[i])) : safe(t.table[i])) << '\n';
    }
    for (const std::string& n : t.notes) wrapped("  ", "  ", n, 4);
    out_ << '\n';
  }

  // Where the GPU waits, by line of the job's Python code (py-spy stacks).
  void host_section() {
    if (!r_.host) {
      if (r_.live && !r_.stacks_note.empty()) field("Python stacks", {r_.stacks_note});
      return;
    }
    const analyses::HostAttribution& h = *r_.host;
    out_ << style_(Tone::kBold, "Where the GPU waits (Python stacks)") << '\n';
    field("idle",
          {fmt::format("GPU idle {} of {} ({})", format_pct(h.window_s > 0 ? 100 * h.gpu_idle_s / h.window_s : 0),
                       format_seconds(h.window_s), h.method == "trace" ? "trace" : "sampled utilization"),
           fmt::format("stacks of {} cover {}", h.thread,
                       format_pct(h.gpu_idle_s > 0 ? 100 * h.covered_idle_s / h.gpu_idle_s : 0))});
    int n = 0;
    for (const analyses::HotSpot& s : h.spots) {
      if (s.idle_s <= 0 || ++n > 6) break;
      std::string file = s.frame.file.empty() ? "(library code only)" : s.frame.file;
      if (const auto slash = file.rfind('/'); slash != std::string::npos && !s.frame.file.empty())
        file = file.substr(slash + 1);
      const std::string per = r_.host_steps > 0
                                  ? format_ms(1e3 * s.idle_s / static_cast<double>(r_.host_steps)) + "/step"
                                  : format_pct(h.gpu_idle_s > 0 ? 100 * s.idle_s / h.gpu_idle_s : 0) + " of idle";
      std::vector<std::string> items = {fmt::format("{}:{} {}()", file, s.frame.line, s.frame.function),
                                        std::string(analyses::host_class_name(s.cls)), per};
      if (!s.text.empty()) items.push_back("`" + s.text + "`");
      field("", items);
    }
    out_ << '\n';
  }

  // What the samples show: GPU activity over its active window, host and processes.
  void live_section() {
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
      field(fmt::format("GPU{}", g.index),
            {fmt::format("active {}", format_seconds(g.active_s)), "util " + m(g.util_pct, "%"),
             "SM " + m(g.sm_active_pct, "%"), "tensor " + m(g.tensor_active_pct, "%"),
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

  void header() {
    out_ << style_(Tone::kBold, "chokepoint " + r_.tool_version) << '\n';
    if (r_.live) {
      live_header();
      return;
    }
    for (const InputInfo& in : r_.inputs) {
      std::vector<std::string> items = {basename_of(in.path)};
      if (!in.format.empty()) items.push_back(in.format);
      items.push_back(format_bytes(static_cast<int64_t>(in.bytes)));
      if (in.events >= 0) items.push_back(format_count(in.events) + " events");
      field("input", items);
    }
    for (const DeviceInfo& d : r_.devices) {
      std::vector<std::string> items = {d.name.empty() ? "unknown GPU" : d.name};
      if (d.num_sms > 0) items.push_back(fmt::format("{} SMs", d.num_sms));
      if (d.memory_bytes > 0) items.push_back(format_bytes(d.memory_bytes));
      if (!d.compute_capability.empty()) items.push_back("compute " + d.compute_capability);
      if (!d.ceilings.source.empty()) items.push_back("ceilings " + d.ceilings.source);
      field("device", items);
      const std::string under(kFieldLabelWidth, ' ');
      if (!d.ceilings.note.empty()) wrapped(under, under, d.ceilings.note, kFieldLabelWidth);
      if (!d.ceilings.missing_hint.empty()) wrapped(under, under, d.ceilings.missing_hint, kFieldLabelWidth);
    }
    if (r_.devices.empty()) field("device", {"unknown (the input names no GPU)"});
    step_fields();
    out_ << '\n';
  }

  void verdict() {
    const Verdict& v = r_.verdict;
    const std::string line = fmt::format("Bound by: {} — confidence {:.2f}", category_label(v.bound), v.confidence);
    wrapped("", "", line, 2, Tone::kBold);
    if (!v.summary.empty()) wrapped("  ", "  ", v.summary, 2);
    if (v.data_lost && v.bound != rules::Category::kUnknown) {
      wrapped("  ", "  ", fmt::format("confidence lowered by the data lost: {}", data_lost_text(*v.data_lost)), 2,
              Tone::kYellow);
    }
    out_ << '\n';
  }

  // What to change, best first: each remedy with its estimate, what it removes, the change;
  // then the remedies replayed that would not pay, and what the replay started from.
  void remedies() {
    if (!r_.remedies.empty()) {
      out_ << style_(Tone::kBold, "What to change (largest gain first)") << "\n";
      for (size_t i = 0; i < r_.remedies.size(); ++i) remedy(i + 1, r_.remedies[i]);
    }
    const std::vector<std::string> idle = unpaying_what_ifs();
    if (!idle.empty()) {
      const std::string label = "  also replayed, under 1.05x:";
      const size_t indent = label.size() + 1;
      emit(style_(Tone::kDim, label) + " ", wrap_items(idle, room(indent), room(indent)), indent, Tone::kDim);
    }
    if (r_.replay) replay_line(*r_.replay);
    if (!r_.remedies.empty() || !idle.empty() || r_.replay) out_ << '\n';
  }

  // "est. 1.42x (replayed: 10 -> 7 ms per step)", "up to 2.0x", "not estimated".
  static std::string remedy_estimate(const rules::RemedyAdvice& a) {
    if (!a.estimated_speedup) return "not estimated";
    std::string est = (a.estimate_from == "upper bound" ? "up to " : "est. ") + format_speedup(*a.estimated_speedup) +
                      (a.id == "bigger-batch" ? " samples/s" : "");
    if (a.estimate_from == "trace what-if") {
      est += fmt::format(" (replayed: {} -> {} ms per step)", format_number(a.step_ms_before),
                         format_number(a.step_ms_after));
    } else if (!a.estimate_from.empty() && a.estimate_from != "upper bound") {
      est += " (from the " + a.estimate_from + ")";
    }
    return est;
  }

  void remedy(size_t rank, const rules::RemedyAdvice& a) {
    const std::string lead = fmt::format("{:>2}. ", rank);
    wrapped(lead, lead, a.title + " — " + remedy_estimate(a), kFindingIndent.size(), Tone::kBold);
    const std::string ind(kFindingIndent);
    wrapped(ind + style_(Tone::kBold, "change:") + " ", ind + "change: ", a.change, ind.size() + 8);
    std::string removes;
    for (const auto& id : a.findings) removes += (removes.empty() ? "" : ", ") + id;
    if (!removes.empty())
      wrapped(ind + style_(Tone::kDim, "removes:") + " ", ind + "removes: ", removes, ind.size() + 9, Tone::kDim);
    if (!a.what_changes.empty()) {
      wrapped(ind + style_(Tone::kDim, "replay:") + " ", ind + "replay: ", a.what_changes, ind.size() + 8, Tone::kDim);
    }
    if (!a.assumptions.empty()) {
      const std::string more = a.assumptions.size() > 1
                                   ? fmt::format(" (+{} more in --format json)", a.assumptions.size() - 1)
                                   : "";
      wrapped(ind + style_(Tone::kDim, "assumes:") + " ", ind + "assumes: ", a.assumptions.front() + more,
              ind.size() + 9, Tone::kDim);
    }
  }

  // Remedies the trace was replayed with that would not pay: worth knowing too.
  std::vector<std::string> unpaying_what_ifs() const {
    std::vector<std::string> idle;
    for (const auto& w : r_.what_ifs) {
      const bool listed = std::any_of(r_.remedies.begin(), r_.remedies.end(),
                                      [&](const auto& a) { return a.id == w.id; });
      if (!listed && w.estimated_speedup && *w.estimated_speedup < 1.05) {
        idle.push_back(fmt::format("{} {}", safe(w.id), format_speedup(*w.estimated_speedup)));
      }
    }
    return idle;
  }

  void replay_line(const Replay& rp) {
    std::string line = fmt::format("replay of {} steps: {} ms per step recorded, {} replayed", rp.steps,
                                   format_number(rp.recorded_step_ms), format_number(rp.replayed_step_ms));
    if (!rp.recorder.empty()) {
      line += fmt::format(", {} without {}'s own cost (what the estimates start from)", format_number(rp.plain_step_ms),
                          rp.recorder);
    }
    wrapped("  " + style_(Tone::kDim, ""), "  ", line, 4, Tone::kDim);
  }

  // Each kernel class on this machine's roofline. Narrower than kWideW columns, the
  // shares of the peaks and the bound column are left out (the JSON has them).
  void roofline() {
    if (r_.roofline.empty()) return;
    constexpr size_t kLabelW = 15, kMsW = 9, kPctW = 8, kTfW = 16, kGbW = 17, kBoundW = 9, kNarrowW = 10;
    constexpr size_t kWideW = 2 + kLabelW + kMsW + kPctW + kTfW + kGbW + kBoundW;
    const bool wide = width_ >= kWideW;
    const size_t tf_w = wide ? kTfW : kNarrowW, gb_w = wide ? kGbW : kNarrowW;
    // The title on its own line: it is wider than the class column it would head.
    out_ << style_(Tone::kBold, "Roofline by kernel class") << '\n';
    std::string head = pad_right("class", kLabelW) + pad_left("ms/step", kMsW) + pad_left("% step", kPctW) +
                       pad_left(wide ? "TFLOP/s (peak)" : "TFLOP/s", tf_w) +
                       pad_left(wide ? "GB/s (HBM)" : "GB/s", gb_w);
    if (wide) head += pad_left("bound", kBoundW);
    out_ << "  " << style_(Tone::kDim, head) << '\n';
    auto with_share = [wide](const std::optional<double>& v, const std::optional<double>& pct) {
      if (!v) return std::string("-");
      std::string s = format_number(*v);
      if (wide && pct) {
        s += " (";
        s += format_pct(*pct);
        s += ")";
      }
      return s;
    };
    for (const RooflineClass& c : r_.roofline) {
      if (c.pct_of_step < kMinSharePct) continue;
      out_ << "  " << pad_right(safe(c.kernel_class), kLabelW) << pad_left(format_number(c.ms_per_step), kMsW)
           << pad_left(format_pct(c.pct_of_step), kPctW) << pad_left(with_share(c.achieved_tflops, c.pct_of_peak), tf_w)
           << pad_left(with_share(c.achieved_gbps, c.pct_of_hbm), gb_w);
      if (wide) out_ << pad_left(c.bound.empty() ? "-" : safe(c.bound), kBoundW);
      out_ << '\n';
    }
    if (r_.mfu_pct) {
      wrapped("  ", "  ",
              fmt::format("MFU {} of the {} peak (recorded GEMM FLOPs over the analyzed time)", format_pct(*r_.mfu_pct),
                          safe(r_.mfu_precision)),
              4, Tone::kDim);
    }
    out_ << '\n';
  }

  void breakdown() {
    const Breakdown& b = r_.breakdown;
    if (no_gpu(r_)) {  // not "GPU busy 0%, idle 100%": there was no GPU to be idle
      out_ << style_(Tone::kBold, "Where the step time goes") << ": no GPU in the input\n\n";
      return;
    }
    std::vector<std::pair<std::string, std::vector<Row>>> groups;
    groups.push_back({"",
                      {{"GPU busy", b.gpu_busy_pct, gpu_ms_per_step(r_.window, b.gpu_busy_pct)},
                       {"GPU idle", b.gpu_idle_pct, gpu_ms_per_step(r_.window, b.gpu_idle_pct)}}});
    // A group whose shares are all below the shown precision has no rows, and no heading.
    for (auto [title, shares] :
         {std::pair{"idle by cause", &b.idle_by_cause}, std::pair{"busy by class", &b.busy_by_class}}) {
      if (auto rows = share_rows(*shares); !rows.empty()) groups.emplace_back(title, std::move(rows));
    }

    // Columns: 4 of indent, labels, bar, "% step", "ms/step".
    constexpr size_t kMaxLabelW = 22, kPctW = 9, kMsW = 10;
    size_t label_w = 0;
    for (const auto& [title, rows] : groups) {
      for (const Row& row : rows) label_w = std::max(label_w, display_width(row.label));
    }
    label_w = std::min(label_w, kMaxLabelW) + 2;
    double max_ms = 0;
    for (const auto& [title, rows] : groups) {
      for (const Row& row : rows) max_ms = std::max(max_ms, row.ms_per_step.value_or(0));
    }
    const int ms_decimals = column_decimals(max_ms);
    const size_t bar_w = std::clamp<size_t>(width_ - 4 - label_w - kPctW - kMsW, 10, 40);

    out_ << style_(Tone::kBold, pad_right("Where the step time goes", 4 + label_w + bar_w))
         << style_(Tone::kDim, pad_left("% step", kPctW) + pad_left("ms/step", kMsW)) << '\n';
    for (const auto& [title, rows] : groups) {
      if (!title.empty()) out_ << "  " << style_(Tone::kDim, title) << '\n';
      const size_t indent = title.empty() ? 2 : 4;
      for (const Row& row : rows) {
        const std::string label = row.label.substr(0, kMaxLabelW);
        out_ << std::string(indent, ' ') << pad_right(label, label_w + 4 - indent) << bar(row.pct, bar_w)
             << pad_left(format_pct(row.pct), kPctW)
             << pad_left(row.ms_per_step ? format_decimal(*row.ms_per_step, ms_decimals) : "", kMsW) << '\n';
      }
    }
    category_costs();
    out_ << '\n';
  }

  // The per-category costs the verdict was chosen from, largest first.
  void category_costs() {
    std::vector<std::string> items;
    for (const Share& c : sorted_by_pct(r_.breakdown.category_costs)) {
      if (c.pct >= kMinSharePct) items.push_back(safe(c.name) + " " + format_pct(c.pct));
    }
    if (items.empty()) return;
    const std::string label = "cost by category";
    const size_t indent = 2 + label.size() + 2;
    emit("  " + style_(Tone::kDim, label) + "  ", wrap_items(items, room(indent), room(indent)), indent);
  }

  void finding(size_t rank, const rules::Finding& f) {
    // Title line: rank, severity, id, title; the rest sits under kFindingIndent.
    const std::string tag = severity_tag(f.severity);
    const std::string lead = fmt::format("{:>2}. ", rank);
    const std::string id = safe(f.id);
    const std::string plain = lead + tag + " " + id + (f.title.empty() ? "" : " — ");
    const std::string styled = lead + style_(severity_tone(f.severity), tag) + " " + style_(Tone::kBold, id) +
                               (f.title.empty() ? "" : " — ");
    wrapped(styled, plain, f.title, kFindingIndent.size());

    const std::string indent(kFindingIndent);
    std::string by;
    if (!f.remedies.empty()) by = " with " + f.remedies.front();
    const std::string gain = (f.estimated_speedup ? "-> est. " + format_speedup(*f.estimated_speedup) + by
                                                  : std::string("-> speedup not estimated")) +
                             " · " + format_pct(f.time_share_pct) + (r_.live ? " of the run" : " of step time");
    wrapped(indent, indent, gain, indent.size() + 3);

    if (!f.detail.empty()) wrapped(indent, indent, f.detail, indent.size(), Tone::kDim);

    const size_t shown = std::min(f.evidence.size(), kMaxEvidence);
    size_t metric_w = 0, value_w = 0, threshold_w = 0;
    for (size_t i = 0; i < shown; ++i) {
      const rules::Evidence& e = f.evidence[i];
      metric_w = std::max(metric_w, display_width(safe(humanize(e.metric))));
      value_w = std::max(value_w, display_width(safe(format_value(e.value, e.unit))));
      threshold_w = std::max(threshold_w, display_width(threshold_text(e)));
    }
    // The metric column gives way so that value and threshold stay on the line; a metric
    // name longer than its column is cut (the JSON has it whole).
    const size_t fixed = indent.size() + 2 + 2 + value_w + threshold_w;
    metric_w = std::min({metric_w, width_ / 2, width_ > fixed + 8 ? width_ - fixed : size_t{8}});
    for (size_t i = 0; i < shown; ++i) {
      const rules::Evidence& e = f.evidence[i];
      std::string metric = safe(humanize(e.metric));
      if (display_width(metric) > metric_w) metric = metric.substr(0, metric_w - 1) + "~";
      out_ << indent << "  " << pad_right(metric, metric_w) << "  "
           << pad_left(safe(format_value(e.value, e.unit)), value_w);
      if (e.threshold) out_ << style_(Tone::kDim, threshold_text(e));
      out_ << '\n';
    }
    if (f.evidence.size() > shown) {
      out_ << indent << "  " << style_(Tone::kDim, fmt::format("+{} more in --format json", f.evidence.size() - shown))
           << '\n';
    }

    if (!f.recommendation.empty()) {
      const std::string prefix = indent + "fix: ";
      wrapped(indent + style_(Tone::kBold, "fix:") + " ", prefix, f.recommendation, prefix.size());
    }
    out_ << '\n';
  }

  void findings() {
    if (r_.findings.empty()) {
      out_ << style_(Tone::kBold, "Findings") << ": none (no rule fired on this input)\n\n";
      return;
    }
    out_ << style_(Tone::kBold, fmt::format("Findings ({}, those of the best remedy first)", r_.findings.size()))
         << "\n\n";
    for (size_t i = 0; i < r_.findings.size(); ++i) finding(i + 1, r_.findings[i]);
  }

  void top_kernels() {
    if (r_.top_kernels.empty()) return;
    // Rank, name, then class, precision and tensor cores (dropped when the terminal is
    // too narrow to leave the name kMinNameW columns), calls, total ms, % of busy.
    constexpr size_t kRankW = 5, kClassW = 14, kPrecW = 6, kTcW = 4, kCallsW = 7, kTotalW = 10, kPctW = 8,
                     kMinNameW = 24;
    constexpr size_t kKindW = kClassW + kPrecW + kTcW;
    constexpr size_t kNumbersW = kCallsW + kTotalW + kPctW;
    const bool with_kind = width_ >= kRankW + 1 + kMinNameW + kKindW + kNumbersW;
    const size_t fixed = kRankW + 1 + (with_kind ? kKindW : 0) + kNumbersW;
    const size_t name_w = width_ - fixed;  // width_ >= kMinWidth keeps this >= 16

    std::string columns = with_kind ? pad_right("class", kClassW) + pad_right("prec", kPrecW) + pad_right("TC", kTcW)
                                    : std::string();
    columns += pad_left("calls", kCallsW) + pad_left("total ms", kTotalW) + pad_left("% busy", kPctW);
    out_ << style_(Tone::kBold, pad_right("Top kernels", kRankW + name_w + 1)) << style_(Tone::kDim, columns) << '\n';
    double max_ms = 0;
    for (const KernelRow& k : r_.top_kernels) max_ms = std::max(max_ms, k.total_ms);
    const int ms_decimals = column_decimals(max_ms);
    std::vector<std::string> names;
    for (const KernelRow& k : r_.top_kernels) names.push_back(safe(k.name));
    const std::vector<std::string> shown = distinct_kernel_names(names, name_w);
    for (size_t i = 0; i < r_.top_kernels.size(); ++i) {
      const KernelRow& k = r_.top_kernels[i];
      out_ << pad_left(fmt::format("{}.", i + 1), kRankW - 1) << ' ' << pad_right(shown[i], name_w + 1);
      if (with_kind) {
        const std::string tc = !k.tensor_cores ? "-" : *k.tensor_cores ? "yes" : "no";
        out_ << pad_right(k.kernel_class.empty() ? "-" : safe(k.kernel_class), kClassW)
             << pad_right(k.precision.empty() ? "-" : safe(k.precision), kPrecW) << pad_right(tc, kTcW);
      }
      out_ << pad_left(format_count(k.calls), kCallsW) << pad_left(format_decimal(k.total_ms, ms_decimals), kTotalW)
           << pad_left(format_pct(k.pct_of_busy), kPctW) << '\n';
    }
    out_ << '\n';
  }

  void import_stats() {
    if (r_.import_stats.empty()) return;
    out_ << style_(Tone::kBold, "Import warnings") << '\n';
    for (const timeline::ImportStat& s : r_.import_stats) {
      const std::string sev(severity_name(s.severity));
      std::string rest = " ";  // in steps: GCC 12's false -Wrestrict on "literal" + std::string
      rest += safe(s.name);
      rest += " x";
      rest += format_count(s.count);
      rest += ": ";
      wrapped("  " + style_(stat_tone(s.severity), sev) + rest, "  " + sev + rest, s.description, 4);
    }
    out_ << '\n';
  }

  const Report& r_;
  std::ostream& out_;
  Style style_;
  size_t width_;
  bool timings_;
};

}  // namespace

Status TextReporter::write(const Report& r, std::ostream& out, const RenderOptions& opts) const {
  TextWriter(r, out, opts).write();
  if (!out) return Status::Error("writing the text report failed");
  return Status::Ok();
}

}  // namespace chokepoint::report
