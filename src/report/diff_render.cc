#include "report/diff_render.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "report/format_util.h"
#include "report/formats.h"
#include "report/text_layout.h"

namespace chokepoint::report {

namespace {

using Json = nlohmann::ordered_json;

Json num(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Json(round_significant(*v)) : Json(nullptr);
}
Json num(double v) { return num(std::optional<double>(v)); }

std::string side_line(const DiffSide& s) {
  std::string v = "'";
  v += escape_controls(s.path);
  v += "' (" + s.kind + "): ";
  v += rules::category_name(s.report.verdict.bound);
  v += "-bound";
  if (!s.report.verdict.summary.empty()) v += ", " + escape_controls(s.report.verdict.summary);
  return v;
}

std::string dist(const Distribution& d, int64_t steps) {
  if (steps <= 0) return "no steps";
  std::string v = "p50 ";
  v += format_ms(d.p50) + ", p95 " + format_ms(d.p95) + " over " + std::to_string(steps) + " steps";
  return v;
}

std::string ms_or_dash(const Distribution& d, double v) { return d.p50 > 0 ? format_ms(v) : std::string("-"); }

std::string signed_ms(double v) {
  std::string s = v > 0 ? "+" : "";
  s += format_ms(v);
  return s;
}

// `prefix` then `text` wrapped to the width, later lines indented under the text.
void wrapped(std::ostream& out, const std::string& prefix, std::string_view text, const RenderOptions& opts) {
  const size_t indent = display_width(prefix);
  const size_t width = static_cast<size_t>(std::max(opts.width, 40));
  const size_t room = width > indent + 20 ? width - indent : 20;
  const std::vector<std::string> lines = wrap(text, room, room);
  for (size_t i = 0; i < lines.size(); ++i) {
    out << (i == 0 ? prefix : std::string(indent, ' ')) << lines[i] << "\n";
  }
  if (lines.empty()) out << prefix << "\n";
}

// Decimals of a share table: from its largest value, so its rows line up and a change of
// a thousandth of a millisecond in a 30 ms step does not print as +0.000945 ms.
int share_decimals(const std::vector<ShareChange>& rows) {
  double m = 0;
  for (const ShareChange& c : rows) m = std::max({m, std::abs(c.before_ms), std::abs(c.after_ms)});
  return column_decimals(m);
}

std::string share_ms(double v, int decimals) { return format_decimal(v, decimals) + " ms"; }
std::string signed_share(double v, int decimals) {
  const std::string s = format_decimal(v, decimals);
  return (v > 0 && s.find_first_not_of("0.,") != std::string::npos ? "+" : "") + s + " ms";
}

void text_shares(std::ostream& out, const char* heading, const std::vector<ShareChange>& rows) {
  if (rows.empty()) return;
  const int dec = share_decimals(rows);
  out << "\n" << heading << " (ms per step)\n";
  for (const ShareChange& c : rows) {
    if (std::abs(c.after_ms - c.before_ms) < 0.005 && c.before_ms < 0.005) continue;
    out << fmt::format("  {:<22} {:>11} -> {:>11}  {:>11}\n", escape_controls(humanize(c.name)),
                       share_ms(c.before_ms, dec), share_ms(c.after_ms, dec),
                       signed_share(c.after_ms - c.before_ms, dec));
  }
}

std::string promise_state(const PromiseCheck& p) {
  if (p.applied == "applied") return p.shared ? "applied (shared)" : "applied";
  if (p.applied == "partly") return "partly applied";
  return p.applied == "not-applied" ? "not applied" : "unknown";
}

// "1 run, p50 32.1 ms over 4 steps (31.6 ms without the recorder's cost)"; several runs:
// each run's best figure.
std::string runs_line(const std::vector<RunStep>& runs, const Distribution& d, int64_t steps) {
  if (runs.size() <= 1) {
    std::string v = dist(d, steps);
    if (!runs.empty() && runs[0].source == "corrected" && runs[0].ms > 0) {
      v += ", " + format_ms(runs[0].ms) + " without the recorder's own cost (" +
           fmt::format("{:.0f}%", 100 * runs[0].recorder_share) + " of the step)";
    }
    return v;
  }
  std::string v = std::to_string(runs.size()) + " runs:";
  for (const RunStep& r : runs) v += " " + (r.ms > 0 ? format_ms(r.ms) : std::string("no steps")) + ",";
  v.pop_back();
  return v + " (the median run: " + dist(d, steps) + ")";
}

Status write_text(const RunDiff& d, std::ostream& out, const RenderOptions& opts) {
  const Style st(opts);
  out << st(Tone::kBold, "chokepoint diff") << "\n";
  wrapped(out, "  before: ", side_line(d.before), opts);
  wrapped(out, "  after:  ", side_line(d.after), opts);
  out << "\n";
  const StepChange& s = d.step;
  out << st(Tone::kBold, "Step time") << "  ";
  wrapped(out, "", step_change_words(s), [&] {
    RenderOptions o = opts;
    o.width = std::max(40, opts.width - 11);
    return o;
  }());
  wrapped(out, "  before: ", runs_line(s.runs_before, s.before, s.steps_before), opts);
  wrapped(out, "  after:  ", runs_line(s.runs_after, s.after, s.steps_after), opts);
  if (s.headline && s.speedup && s.headline_source != "untraced") {
    wrapped(out, "  as profiled: ", ratio_words(*s.speedup) + " (the recorders' own cost included)", opts);
  }
  wrapped(out, "  noise:  ", s.noise_note, opts);
  if (!d.promises.empty()) {
    out << "\n" << st(Tone::kBold, "Promise check") << " (remedies BEFORE's report estimated)\n";
    for (const PromiseCheck& p : d.promises) {
      wrapped(out, fmt::format("  {:<20} {:<17} ", escape_controls(p.remedy), promise_state(p)),
              escape_controls(p.note), opts);
    }
  }
  if (!d.findings.empty()) {
    out << "\n" << st(Tone::kBold, "Findings") << "\n";
    for (const FindingChange& f : d.findings) {
      const Severity sev = f.status == "resolved" || f.status == "unclear" ? f.severity_before : f.severity_after;
      wrapped(out, fmt::format("  {:<9} {:<28} {:<9} ", f.status, escape_controls(f.id), severity_name(sev)),
              escape_controls(f.title), opts);
    }
  }
  text_shares(out, "Where the step goes, by category", d.categories);
  text_shares(out, "GPU busy by kernel class", d.kernel_classes);
  text_shares(out, "GPU idle by cause", d.idle_causes);
  for (const std::string& n : d.notes) {
    out << "\n";
    wrapped(out, "Note: ", escape_controls(n), opts);
  }
  return out ? Status::Ok() : Status::Error("writing the diff failed");
}

// Markdown: the characters that would change meaning are escaped (as markdown_reporter).
std::string md(std::string_view text) {
  std::string out;
  for (char c : escape_controls(text)) {
    if (c == '<') {
      out += "&lt;";
    } else {
      if (c == '|' || c == '*' || c == '_' || c == '\\' || c == '[' || c == ']' || c == '`') out += '\\';
      out += c;
    }
  }
  return out;
}

void md_shares(std::ostream& out, const char* heading, const std::vector<ShareChange>& rows) {
  if (rows.empty()) return;
  out << "\n**" << heading << "** (ms per step)\n\n| | before | after | change |\n|---|---:|---:|---:|\n";
  for (const ShareChange& c : rows) {
    out << "| " << md(humanize(c.name)) << " | " << format_ms(c.before_ms) << " | " << format_ms(c.after_ms) << " | "
        << signed_ms(c.after_ms - c.before_ms) << " |\n";
  }
}

// The best figures of a side's runs: "31.6 ms", "4.66 ms, 4.81 ms, 5.02 ms".
std::string runs_cell(const std::vector<RunStep>& runs) {
  std::string v;
  for (const RunStep& r : runs) v += (v.empty() ? "" : ", ") + (r.ms > 0 ? format_ms(r.ms) : std::string("-"));
  return v.empty() ? "-" : v;
}

Status write_md(const RunDiff& d, std::ostream& out) {
  const StepChange& s = d.step;
  out << "## chokepoint diff: " << md(step_change_words(s)) << "\n\n";
  out << "| | before | after |\n|---|---:|---:|\n";
  out << "| input | " << md(d.before.path) << " (" << d.before.kind << ") | " << md(d.after.path) << " ("
      << d.after.kind << ") |\n";
  out << "| verdict | " << rules::category_name(d.before.report.verdict.bound) << " | "
      << rules::category_name(d.after.report.verdict.bound) << " |\n";
  out << "| steps | " << s.steps_before << " | " << s.steps_after << " |\n";
  out << "| runs | " << s.runs_before.size() << " | " << s.runs_after.size() << " |\n";
  out << "| step p50 (as profiled) | " << ms_or_dash(s.before, s.before.p50) << " | "
      << ms_or_dash(s.after, s.after.p50) << " |\n";
  out << "| step p95 (as profiled) | " << ms_or_dash(s.before, s.before.p95) << " | "
      << ms_or_dash(s.after, s.after.p95) << " |\n";
  out << "| step, best figure (" << (s.headline_source.empty() ? "none" : s.headline_source) << ") | "
      << runs_cell(s.runs_before) << " | " << runs_cell(s.runs_after) << " |\n\n";
  if (s.headline && s.speedup && s.headline_source != "untraced")
    out << "As profiled (the recorders' own cost included): " << md(ratio_words(*s.speedup)) << ".\n\n";
  out << "Noise: " << md(s.noise_note) << "\n";
  if (!d.promises.empty()) {
    out << "\n**Promise check**\n\n| remedy | applied | predicted | measured | |\n|---|---|---:|---:|---|\n";
    for (const PromiseCheck& p : d.promises) {
      out << "| " << md(p.remedy) << " | " << promise_state(p) << " | "
          << (p.predicted ? format_speedup_range(*p.predicted, p.predicted_range_end) : "-") << " | "
          << (p.measured ? format_ratio(*p.measured) : "-") << " | " << md(p.note) << " |\n";
    }
  }
  if (!d.findings.empty()) {
    out << "\n**Findings**\n\n| | finding | severity | |\n|---|---|---|---|\n";
    for (const FindingChange& f : d.findings) {
      const Severity sev = f.status == "resolved" || f.status == "unclear" ? f.severity_before : f.severity_after;
      out << "| " << f.status << " | " << md(f.id) << " | " << severity_name(sev) << " | " << md(f.title) << " |\n";
    }
  }
  md_shares(out, "Where the step goes, by category", d.categories);
  md_shares(out, "GPU busy by kernel class", d.kernel_classes);
  md_shares(out, "GPU idle by cause", d.idle_causes);
  for (const std::string& n : d.notes) out << "\nNote: " << md(n) << "\n";
  return out ? Status::Ok() : Status::Error("writing the diff failed");
}

Json dist_json(const Distribution& d, int64_t steps) {
  if (steps <= 0) return nullptr;
  return Json{
      {"mean", num(d.mean)}, {"p50", num(d.p50)}, {"p95", num(d.p95)}, {"min", num(d.min)}, {"max", num(d.max)}};
}

Json runs_json(const std::vector<RunStep>& runs) {
  Json a = Json::array();
  for (const RunStep& r : runs) {
    a.push_back(Json{{"path", r.path},
                     {"step_ms", r.ms > 0 ? num(r.ms) : Json(nullptr)},
                     {"source", r.source.empty() ? Json(nullptr) : Json(r.source)},
                     {"profiled_step_ms", r.profiled_ms > 0 ? num(r.profiled_ms) : Json(nullptr)},
                     {"recorder_share", num(r.recorder_share)},
                     {"uncertainty", num(r.uncertainty)}});
  }
  return a;
}

Json side_json(const DiffSide& s) {
  return Json{{"path", s.path},
              {"kind", s.kind},
              {"verdict", rules::category_name(s.report.verdict.bound)},
              {"summary", s.report.verdict.summary},
              {"device", s.report.devices.empty() ? Json(nullptr) : Json(s.report.devices[0].name)}};
}

Json shares_json(const std::vector<ShareChange>& rows) {
  Json a = Json::array();
  for (const ShareChange& c : rows) {
    a.push_back(Json{{"name", c.name},
                     {"before_ms", num(c.before_ms)},
                     {"after_ms", num(c.after_ms)},
                     {"before_pct", num(c.before_pct)},
                     {"after_pct", num(c.after_pct)}});
  }
  return a;
}

}  // namespace

std::string ratio_words(double x) { return x >= 1 ? format_ratio(x) + " faster" : format_ratio(1 / x) + " slower"; }

std::string step_change_words(const StepChange& s) {
  if (!s.headline) return "no step time to compare";
  std::string v = ratio_words(*s.headline);
  if (s.headline_low && s.headline_high) {
    // The range in words that read as the headline does: "(1.44x to 2.8x)" faster,
    // "(1.1x to 1.3x slower)", "(1.47x slower to 1.31x faster)" across no change.
    const double lo = *s.headline_low, hi = *s.headline_high;
    if (lo >= 1) {
      v += fmt::format(" ({} to {})", format_ratio(lo), format_ratio(hi));
    } else if (hi <= 1) {
      v += fmt::format(" ({} to {} slower)", format_ratio(1 / hi), format_ratio(1 / lo));
    } else {
      v += fmt::format(" ({} slower to {} faster)", format_ratio(1 / lo), format_ratio(hi));
    }
  }
  if (s.headline_source == "corrected") v += ", without the recorders' own cost";
  if (s.headline_source == "profiled") v += ", as profiled (the recorders' own cost unknown)";
  if (s.runs_before.size() > 1 || s.runs_after.size() > 1)
    v += fmt::format(", {} vs {} runs", s.runs_before.size(), s.runs_after.size());
  v += s.within_noise ? "; within noise" : "";
  return v;
}

Json diff_to_json(const RunDiff& d) {
  const StepChange& s = d.step;
  Json j;
  j["schema"] = kDiffSchema;
  j["before"] = side_json(d.before);
  j["after"] = side_json(d.after);
  j["step"] = Json{{"steps_before", s.steps_before},
                   {"steps_after", s.steps_after},
                   {"before_ms", dist_json(s.before, s.steps_before)},
                   {"after_ms", dist_json(s.after, s.steps_after)},
                   {"headline", Json{{"speedup", num(s.headline)},
                                     {"range", s.headline_low && s.headline_high
                                                   ? Json::array({num(s.headline_low), num(s.headline_high)})
                                                   : Json(nullptr)},
                                     {"source", s.headline_source.empty() ? Json(nullptr) : Json(s.headline_source)},
                                     {"words", step_change_words(s)}}},
                   {"runs_before", runs_json(s.runs_before)},
                   {"runs_after", runs_json(s.runs_after)},
                   {"speedup", num(s.speedup)},
                   {"change_pct", num(s.change_pct)},
                   {"plain_speedup", num(s.plain_speedup)},
                   {"noise_method", s.noise_method},
                   {"p_value", num(s.p_value)},
                   {"step_p_value", num(s.step_p_value)},
                   {"noise_floor", s.noise_floor > 0 ? num(s.noise_floor) : Json(nullptr)},
                   {"noise_floor_source", s.noise_floor_source.empty() ? Json(nullptr) : Json(s.noise_floor_source)},
                   {"within_noise", s.within_noise},
                   {"noise_note", s.noise_note}};
  j["same_job"] = Json{{"verdict", d.same_job},
                       {"kernel_similarity", num(d.kernel_similarity)},
                       {"shape_similarity", num(d.shape_similarity)}};
  j["categories"] = shares_json(d.categories);
  j["kernel_classes"] = shares_json(d.kernel_classes);
  j["idle_causes"] = shares_json(d.idle_causes);
  Json findings = Json::array();
  for (const FindingChange& f : d.findings) {
    findings.push_back(Json{
        {"id", f.id},
        {"title", f.title},
        {"status", f.status},
        {"severity_before", f.status == "new" ? Json(nullptr) : Json(severity_name(f.severity_before))},
        {"severity_after",
         f.status == "resolved" || f.status == "unclear" ? Json(nullptr) : Json(severity_name(f.severity_after))}});
  }
  j["findings"] = std::move(findings);
  Json promises = Json::array();
  for (const PromiseCheck& p : d.promises) {
    promises.push_back(
        Json{{"remedy", p.remedy},
             {"title", p.title},
             {"applied", p.applied},
             {"shared", p.shared},
             {"predicted_speedup", num(p.predicted)},
             {"predicted_speedup_range", p.predicted && p.predicted_range_end
                                             ? Json::array({num(std::min(*p.predicted, *p.predicted_range_end)),
                                                            num(std::max(*p.predicted, *p.predicted_range_end))})
                                             : Json(nullptr)},
             {"measured_speedup", num(p.measured)},
             {"note", p.note}});
  }
  j["promises"] = std::move(promises);
  j["notes"] = d.notes;
  return j;
}

Status write_diff(const RunDiff& d, std::string_view format, std::ostream& out, const RenderOptions& opts) {
  auto f = parse_format(format, kDiffFormats);
  if (!f.ok()) return f.status();
  switch (f.value()) {
    case Format::kText: return write_text(d, out, opts);
    case Format::kMarkdown: return write_md(d, out);
    case Format::kHtml: return write_diff_html(d, out);
    case Format::kJson: break;
  }
  out << diff_to_json(d).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  return out ? Status::Ok() : Status::Error("writing the diff failed");
}

}  // namespace chokepoint::report
