#include "report/diff_render.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "report/format_util.h"

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

void text_shares(std::ostream& out, const char* heading, const std::vector<ShareChange>& rows) {
  if (rows.empty()) return;
  out << "\n" << heading << " (ms per step)\n";
  for (const ShareChange& c : rows) {
    if (std::abs(c.after_ms - c.before_ms) < 0.005 && c.before_ms < 0.005) continue;
    out << fmt::format("  {:<22} {:>11} -> {:>11}  {:>11}\n", escape_controls(humanize(c.name)), format_ms(c.before_ms),
                       format_ms(c.after_ms), signed_ms(c.after_ms - c.before_ms));
  }
}

std::string promise_state(const PromiseCheck& p) {
  if (p.applied == "applied") return p.shared ? "applied (shared)" : "applied";
  if (p.applied == "partly") return "partly applied";
  return p.applied == "not-applied" ? "not applied" : "unknown";
}

Status write_text(const RunDiff& d, std::ostream& out, const RenderOptions& opts) {
  const Style st(opts);
  out << st(Tone::kBold, "chokepoint diff") << "\n  before: " << side_line(d.before)
      << "\n  after:  " << side_line(d.after) << "\n\n";
  const StepChange& s = d.step;
  out << st(Tone::kBold, "Step time") << "  " << step_change_words(s) << "\n";
  out << "  before: " << dist(s.before, s.steps_before) << "\n";
  out << "  after:  " << dist(s.after, s.steps_after) << "\n";
  if (s.plain_speedup)
    out << "  without the recorders' own cost (replayed): " << format_speedup(*s.plain_speedup) << "\n";
  out << "  noise:  " << s.noise_note << "\n";
  if (!d.promises.empty()) {
    out << "\n" << st(Tone::kBold, "Promise check") << " (remedies BEFORE's report estimated)\n";
    for (const PromiseCheck& p : d.promises) {
      out << fmt::format("  {:<20} {:<17} {}\n", escape_controls(p.remedy), promise_state(p), escape_controls(p.note));
    }
  }
  if (!d.findings.empty()) {
    out << "\n" << st(Tone::kBold, "Findings") << "\n";
    for (const FindingChange& f : d.findings) {
      const Severity sev = f.status == "resolved" || f.status == "unclear" ? f.severity_before : f.severity_after;
      out << fmt::format("  {:<9} {:<28} {:<9} {}\n", f.status, escape_controls(f.id), severity_name(sev),
                         escape_controls(f.title));
    }
  }
  text_shares(out, "Where the step goes, by category", d.categories);
  text_shares(out, "GPU busy by kernel class", d.kernel_classes);
  text_shares(out, "GPU idle by cause", d.idle_causes);
  for (const std::string& n : d.notes) out << "\nNote: " << escape_controls(n) << "\n";
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

Status write_md(const RunDiff& d, std::ostream& out) {
  const StepChange& s = d.step;
  out << "## chokepoint diff: " << md(step_change_words(s)) << "\n\n";
  out << "| | before | after |\n|---|---:|---:|\n";
  out << "| input | " << md(d.before.path) << " (" << d.before.kind << ") | " << md(d.after.path) << " ("
      << d.after.kind << ") |\n";
  out << "| verdict | " << rules::category_name(d.before.report.verdict.bound) << " | "
      << rules::category_name(d.after.report.verdict.bound) << " |\n";
  out << "| steps | " << s.steps_before << " | " << s.steps_after << " |\n";
  out << "| step p50 | " << ms_or_dash(s.before, s.before.p50) << " | " << ms_or_dash(s.after, s.after.p50) << " |\n";
  out << "| step p95 | " << ms_or_dash(s.before, s.before.p95) << " | " << ms_or_dash(s.after, s.after.p95) << " |\n\n";
  if (s.plain_speedup)
    out << "Without the recorders' own cost (replayed): " << format_speedup(*s.plain_speedup) << ".\n\n";
  out << "Noise: " << md(s.noise_note) << "\n";
  if (!d.promises.empty()) {
    out << "\n**Promise check**\n\n| remedy | applied | predicted | measured | |\n|---|---|---:|---:|---|\n";
    for (const PromiseCheck& p : d.promises) {
      out << "| " << md(p.remedy) << " | " << promise_state(p) << " | "
          << (p.predicted ? format_speedup_range(*p.predicted, p.predicted_range_end) : "-") << " | "
          << (p.measured ? format_speedup(*p.measured) : "-") << " | " << md(p.note) << " |\n";
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

std::string step_change_words(const StepChange& s) {
  if (!s.speedup || !s.change_pct) return "no step time to compare";
  const double x = *s.speedup;
  std::string v = x >= 1 ? format_speedup(x) + " faster" : format_speedup(1 / x) + " slower";
  v += fmt::format(" (median step {:+.1f}%", *s.change_pct);
  v += s.within_noise ? ", within noise)" : ")";
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
                   {"speedup", num(s.speedup)},
                   {"change_pct", num(s.change_pct)},
                   {"plain_speedup", num(s.plain_speedup)},
                   {"noise_method", s.noise_method},
                   {"p_value", num(s.p_value)},
                   {"within_noise", s.within_noise},
                   {"noise_note", s.noise_note}};
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
  if (format == "text") return write_text(d, out, opts);
  if (format == "md" || format == "markdown") return write_md(d, out);
  if (format == "html") return write_diff_html(d, out);
  if (format == "json") {
    out << diff_to_json(d).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    return out ? Status::Ok() : Status::Error("writing the diff failed");
  }
  return Status::Error(ErrorCode::kUsage, "unknown format '" + std::string(format) + "' (use " + diff_formats() + ")");
}

std::string diff_formats() { return "text, md, json, html"; }

}  // namespace chokepoint::report
