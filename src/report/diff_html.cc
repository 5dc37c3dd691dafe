// The diff as one self-contained HTML page (`diff --format html`), from the same parts as
// the report's page (html_parts.h): the step change and the promise check first.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/diff_render.h"
#include "report/format_util.h"
#include "report/html_parts.h"

namespace chokepoint::report {
namespace {

using html::esc;

std::string side_row(const char* label, const DiffSide& s, const Distribution& d, int64_t steps) {
  return fmt::format(
      "<tr><td>{}</td><td class=\"mono name\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}"
      "</td><td class=\"n\">{}</td></tr>",
      label, esc(s.path), esc(s.kind), esc(rules::category_name(s.report.verdict.bound)), steps,
      steps > 0 ? esc(format_ms(d.p50)) : "-", steps > 0 ? esc(format_ms(d.p95)) : "-");
}

std::string promises_html(const RunDiff& d) {
  if (d.promises.empty()) return "";
  std::string s =
      "<section id=\"promises\"><h2>Promise check</h2><table><thead><tr><th>remedy</th><th>applied</th>"
      "<th class=\"n\">predicted</th><th class=\"n\">measured</th><th></th></tr></thead><tbody>";
  for (const PromiseCheck& p : d.promises) {
    s += fmt::format(
        "<tr><td class=\"mono\">{}</td><td>{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
        esc(p.remedy), esc(p.applied), p.shared ? " (shared)" : "",
        p.predicted ? esc(format_speedup_range(*p.predicted, p.predicted_range_end)) : "-",
        p.measured ? esc(format_ratio(*p.measured)) : "-", esc(p.note));
  }
  return s + "</tbody></table></section>\n";
}

std::string findings_html(const RunDiff& d) {
  if (d.findings.empty()) return "";
  std::string s = "<section id=\"findings\"><h2>Findings</h2><table><tbody>";
  for (const FindingChange& f : d.findings) {
    const std::string sev(
        severity_name(f.status == "resolved" || f.status == "unclear" ? f.severity_before : f.severity_after));
    s += fmt::format(
        "<tr><td>{}</td><td><span class=\"badge {}\">{}</span></td><td class=\"mono\">{}</td><td>{}</td></tr>",
        esc(f.status), sev, sev, esc(f.id), esc(f.title));
  }
  return s + "</tbody></table></section>\n";
}

// Two stacked bars (before, after) on one scale, and the table of changes. `color_prefix`
// names the colours of the report's charts ("idle:" for idle causes).
std::string shares_html(const char* heading, const std::vector<ShareChange>& rows,
                        const std::string& color_prefix = "") {
  if (rows.empty()) return "";
  std::vector<html::Segment> before, after;
  double before_total = 0, after_total = 0;
  for (const ShareChange& c : rows) {
    before.push_back({color_prefix + c.name, c.before_ms});
    after.push_back({color_prefix + c.name, c.after_ms});
    before_total += std::max(0.0, c.before_ms);
    after_total += std::max(0.0, c.after_ms);
  }
  const double full = std::max(before_total, after_total);
  std::string s = fmt::format("<h3>{}</h3><p class=\"muted\">before</p>", heading);
  s += html::stacked_bar(before, "ms", full);
  s += "<p class=\"muted\">after</p>";
  s += html::stacked_bar(after, "ms", full);
  s += "<table class=\"sortable\"><thead><tr><th></th><th class=\"n\">before ms</th><th class=\"n\">after ms</th>"
       "<th class=\"n\">change ms</th></tr></thead><tbody>";
  for (const ShareChange& c : rows) {
    s += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                     esc(humanize(c.name)), html::fmt_num(c.before_ms, 2), html::fmt_num(c.after_ms, 2),
                     html::fmt_num(c.after_ms - c.before_ms, 2));
  }
  return s + "</tbody></table>";
}

}  // namespace

Status write_diff_html(const RunDiff& d, std::ostream& out) {
  const StepChange& s = d.step;
  out << html::page_start("chokepoint diff: " + step_change_words(s)) << "<h1>chokepoint diff</h1>\n";
  out << "<section class=\"verdict\" id=\"verdict\"><div class=\"bound\">" << esc(step_change_words(s)) << "</div>";
  if (s.headline && s.speedup && s.headline_source != "untraced")
    out << "<p>As profiled (the recorders' own cost included): " << esc(ratio_words(*s.speedup)) << "</p>";
  out << "<p>" << esc(s.noise_note) << "</p></section>\n";
  out << "<section id=\"sides\"><table><thead><tr><th></th><th>input</th><th>kind</th><th>verdict</th><th class=\"n\">"
         "steps</th><th class=\"n\">p50</th><th class=\"n\">p95</th></tr></thead><tbody>"
      << side_row("before", d.before, s.before, s.steps_before) << side_row("after", d.after, s.after, s.steps_after)
      << "</tbody></table></section>\n";
  out << promises_html(d) << findings_html(d) << "<section id=\"breakdown\"><h2>Where the step time moved</h2>"
      << shares_html("By bottleneck category (ms per step)", d.categories)
      << shares_html("GPU busy by kernel class (ms per step)", d.kernel_classes)
      << shares_html("GPU idle by cause (ms per step)", d.idle_causes, "idle:") << "</section>\n";
  for (const std::string& n : d.notes) out << "<p class=\"muted\">Note: " << esc(n) << "</p>\n";
  out << html::page_end();
  return out ? Status::Ok() : Status::Error("writing the diff failed");
}

}  // namespace chokepoint::report
