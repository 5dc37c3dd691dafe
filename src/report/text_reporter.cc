// The text report (text_reporter.h): the order of its sections, and those about the
// analysis itself: the header, the verdict, where the step time goes, the roofline, the
// top kernels and the import warnings. The writer and its line primitives are
// text_writer.h; remedies and findings text_findings.cc; a recording's samples and
// Python stacks text_live.cc.
#include "report/text_reporter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/distributed_render.h"
#include "report/format_util.h"
#include "report/kernel_name.h"
#include "report/text_layout.h"
#include "report/text_writer.h"

namespace chokepoint::report {
namespace text {
namespace {

// Breakdown rows per group; smaller shares fold into one "other" row so that the rows
// still add up to the group's total.
constexpr size_t kMaxShareRows = 6;
constexpr double kMinSharePct = 0.1;

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

}  // namespace

void TextWriter::write() {
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

void TextWriter::step_fields() {
  const Window& w = r_.window;
  field("steps", {std::to_string(w.steps) + (w.step_source.empty() ? "" : " (" + w.step_source + ")")});
  if (w.steps > 0) {
    field("step time", {"mean " + format_ms(w.step_time_ms.mean), "p50 " + format_ms(w.step_time_ms.p50),
                        "p95 " + format_ms(w.step_time_ms.p95)});
  }
  for (const ProfilerWindow& pw : w.profiler_windows) field("window", {safe(profiler_window_text(pw))});
}

// The ranks of a distributed job side by side.
void TextWriter::distributed_section() {
  const DistributedText t = distributed_text(*r_.distributed);
  out_ << style_(Tone::kBold, t.heading) << '\n';
  for (size_t i = 0; i < t.table.size(); ++i) {
    out_ << "  " << (i == 0 ? style_(Tone::kDim, safe(t.table[i])) : safe(t.table[i])) << '\n';
  }
  for (const std::string& n : t.notes) wrapped("  ", "  ", n, 4);
  out_ << '\n';
}

void TextWriter::header() {
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
  std::vector<std::vector<std::string>> shown;
  for (const DeviceInfo& d : r_.devices) {
    std::vector<std::string> items = {d.name.empty() ? "unknown GPU" : d.name};
    if (d.num_sms > 0) items.push_back(fmt::format("{} SMs", d.num_sms));
    if (d.memory_bytes > 0) items.push_back(format_bytes(d.memory_bytes));
    if (!d.compute_capability.empty()) items.push_back("compute " + d.compute_capability);
    if (!d.ceilings.source.empty()) items.push_back("ceilings " + d.ceilings.source);
    // The same GPU in each input (windows of one process, runs of one job) is one line.
    if (std::find(shown.begin(), shown.end(), items) != shown.end()) continue;
    shown.push_back(items);
    field("device", items);
    const std::string under(kFieldLabelWidth, ' ');
    if (!d.ceilings.note.empty()) wrapped(under, under, d.ceilings.note, kFieldLabelWidth);
    if (!d.ceilings.missing_hint.empty()) wrapped(under, under, d.ceilings.missing_hint, kFieldLabelWidth);
  }
  if (r_.devices.empty()) field("device", {"unknown (the input names no GPU)"});
  step_fields();
  out_ << '\n';
}

void TextWriter::verdict() {
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

// Each kernel class on this machine's roofline. Narrower than kWideW columns, the
// shares of the peaks and the bound column are left out (the JSON has them).
void TextWriter::roofline() {
  if (r_.roofline.empty()) return;
  constexpr size_t kLabelW = 15, kMsW = 9, kPctW = 8, kTfW = 16, kGbW = 17, kBoundW = 9, kNarrowW = 10;
  constexpr size_t kWideW = 2 + kLabelW + kMsW + kPctW + kTfW + kGbW + kBoundW;
  const bool wide = width_ >= kWideW;
  const size_t tf_w = wide ? kTfW : kNarrowW, gb_w = wide ? kGbW : kNarrowW;
  // The title on its own line: it is wider than the class column it would head.
  out_ << style_(Tone::kBold, "Roofline by kernel class") << '\n';
  std::string head = pad_right("class", kLabelW) + pad_left("ms/step", kMsW) + pad_left("% step", kPctW) +
                     pad_left(wide ? "TFLOP/s (peak)" : "TFLOP/s", tf_w) + pad_left(wide ? "GB/s (HBM)" : "GB/s", gb_w);
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

void TextWriter::breakdown() {
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
void TextWriter::category_costs() {
  std::vector<std::string> items;
  for (const Share& c : sorted_by_pct(r_.breakdown.category_costs)) {
    if (c.pct >= kMinSharePct) items.push_back(safe(c.name) + " " + format_pct(c.pct));
  }
  if (items.empty()) return;
  const std::string label = "cost by category";
  const size_t indent = 2 + label.size() + 2;
  emit("  " + style_(Tone::kDim, label) + "  ", wrap_items(items, room(indent), room(indent)), indent);
}

void TextWriter::top_kernels() {
  if (r_.top_kernels.empty()) return;
  // Rank, name, then class, precision and tensor cores (dropped when the terminal is
  // too narrow to leave the name kMinNameW columns), calls, total ms, % of busy.
  constexpr size_t kRankW = 5, kClassW = 14, kPrecW = 6, kTcW = 4, kCallsW = 7, kTotalW = 10, kPctW = 8, kMinNameW = 24;
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

void TextWriter::import_stats() {
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

}  // namespace text

Status TextReporter::write(const Report& r, std::ostream& out, const RenderOptions& opts) const {
  text::TextWriter(r, out, opts).write();
  if (!out) return Status::Error("writing the text report failed");
  return Status::Ok();
}

}  // namespace chokepoint::report
