#include "report/html_reporter.h"

#include "report/distributed_render.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/format_util.h"
#include "report/html_parts.h"

namespace chokepoint::report {
namespace {

using html::esc;

// Rows of the tables: the page stays small and readable (the JSON report has all).
constexpr size_t kMaxKernels = 15;
constexpr size_t kMaxHotSpots = 15;
constexpr size_t kMaxEvidence = 6;

std::string badge(Severity s) {
  const std::string name(severity_name(s));
  return "<span class=\"badge " + name + "\">" + name + "</span>";
}

std::string verdict_section(const Report& r) {
  std::string s = "<section class=\"verdict\" id=\"verdict\"><div class=\"bound\">Bound by: ";
  s += esc(category_label(r.verdict.bound));
  s += fmt::format(" <span class=\"muted\">(confidence {:.0f}%)</span></div>", 100 * r.verdict.confidence);
  if (!r.verdict.summary.empty()) s += "<p>" + esc(r.verdict.summary) + "</p>";
  if (!r.verdict.unknown_reason.empty()) s += "<p class=\"muted\">" + esc(r.verdict.unknown_reason) + "</p>";
  if (r.verdict.data_lost) s += "<p class=\"muted\">" + esc(data_lost_text(*r.verdict.data_lost)) + "</p>";
  const Window& w = r.window;
  if (w.steps > 0) {
    s += fmt::format("<p>Step time p50 <b>{}</b>, p95 {} over {} steps ({})</p>", esc(format_ms(w.step_time_ms.p50)),
                     esc(format_ms(w.step_time_ms.p95)), w.steps, esc(w.step_source));
  }
  if (!w.profiler_windows.empty()) {
    s += "<ul class=\"muted\">";
    for (const ProfilerWindow& pw : w.profiler_windows) s += "<li>Window " + esc(profiler_window_text(pw)) + "</li>";
    s += "</ul>";
  }
  return s + "</section>\n";
}

std::string remedies_section(const Report& r) {
  const std::string on = already_on_text(r);
  const std::string on_html = on.empty()
                                  ? ""
                                  : "<p class=\"muted\">Already in place (the trace shows it, so it is not advised): " +
                                        esc(on) + ".</p>";
  if (r.remedies.empty()) return on_html.empty() ? "" : "<section id=\"remedies\">" + on_html + "</section>\n";
  std::string s = "<section id=\"remedies\"><h2>What to change</h2><p class=\"muted\">" + esc(kRemedyOrder) + ".</p>" +
                  on_html;
  for (size_t i = 0; i < r.remedies.size(); ++i) {
    const rules::RemedyAdvice& a = r.remedies[i];
    s += fmt::format("<div class=\"remedy\"{}>", i == 0 ? " id=\"first-remedy\"" : "");
    if (a.estimated_speedup)
      s += "<span class=\"gain\">" + esc(format_speedup_range(*a.estimated_speedup, a.speedup_range_end)) + "</span>";
    s += fmt::format("<b>{}. {}</b><div><code>{}</code></div>", i + 1, esc(a.title), esc(a.change));
    if (!a.what_changes.empty()) s += "<div class=\"muted\">" + esc(a.what_changes) + "</div>";
    s += "</div>";
  }
  return s + "</section>\n";
}

std::string finding_html(const rules::Finding& f) {
  std::string s = "<details class=\"finding\" open><summary>" + badge(f.severity) + "<b>" + esc(f.title) + "</b> ";
  s += "<span class=\"muted mono\">" + esc(f.id) + "</span>";
  if (f.estimated_speedup) {
    s += " <b>" + esc(format_speedup_range(*f.estimated_speedup, f.speedup_range_end)) + "</b>";
    if (!f.estimate_remedy.empty())
      s += std::string(rules::estimate_is_throughput(f.estimate_remedy) ? " samples/s" : "") +
           " <span class=\"muted\">with <span class=\"mono\">" + esc(f.estimate_remedy) + "</span></span>";
  }
  s += "</summary>";
  if (!f.detail.empty()) s += "<p>" + esc(f.detail) + "</p>";
  if (!f.evidence.empty()) {
    s += "<table><tbody>";
    for (size_t i = 0; i < std::min(kMaxEvidence, f.evidence.size()); ++i) {
      const rules::Evidence& e = f.evidence[i];
      s += "<tr><td>" + esc(humanize(e.metric)) + "</td><td class=\"n\">" + esc(format_value(e.value, e.unit)) +
           "</td><td class=\"muted\">" +
           (e.threshold ? "threshold " + esc(format_value(*e.threshold, e.unit)) : std::string()) + "</td></tr>";
    }
    s += "</tbody></table>";
  }
  if (!f.recommendation.empty()) s += "<p><b>Change:</b> " + esc(f.recommendation) + "</p>";
  return s + "</details>";
}

std::string findings_section(const Report& r) {
  std::string s = "<section id=\"findings\"><h2>Findings</h2>";
  if (r.findings.empty()) s += "<p class=\"muted\">No finding.</p>";
  for (const rules::Finding& f : r.findings) s += finding_html(f);
  return s + "</section>\n";
}

std::string breakdown_section(const Report& r) {
  const Breakdown& b = r.breakdown;
  if (b.busy_by_class.empty() && b.idle_by_cause.empty() && r.window.step_ms.empty() && !r.median_step) return "";
  std::string s = "<section id=\"breakdown\"><h2>Where the step goes</h2>";
  s += fmt::format("<p>GPU busy {}, idle {} of the analyzed time.</p>", esc(format_pct(b.gpu_busy_pct)),
                   esc(format_pct(b.gpu_idle_pct)));
  std::vector<html::Segment> avg;
  for (const Share& x : b.busy_by_class) avg.push_back({x.name, x.ms_per_step});
  for (const Share& x : b.idle_by_cause) avg.push_back({"idle:" + x.name, x.ms_per_step});
  if (!avg.empty())
    s += "<h3>The mean step: GPU work by kernel class, then idle by cause (ms)</h3>" + html::stacked_bar(avg, "ms");
  std::vector<html::Segment> cats;
  for (const Share& x : b.category_costs) cats.push_back({x.name, x.ms_per_step});
  if (!cats.empty()) s += "<h3>Cost by bottleneck category (ms per step)</h3>" + html::stacked_bar(cats, "ms");
  const Window& w = r.window;
  if (!w.step_parts.empty()) {
    s += "<h3>Each step (ms): GPU work by kernel class and idle by cause, with p50 and p95</h3>";
    s += html::step_stacks(w.step_parts, w.step_numbers, w.step_time_ms.p50, w.step_time_ms.p95);
  } else if (!w.step_ms.empty()) {
    s += "<h3>Each step (ms), with p50 and p95</h3>";
    s += html::step_bars(w.step_ms, w.step_numbers, w.step_time_ms.p50, w.step_time_ms.p95);
  }
  if (r.median_step) {
    s += fmt::format(
        "<h3 id=\"strip\">The median step (step {}, {}): the launching thread, each stream, idle gaps by "
        "cause</h3>",
        r.median_step->step_number, esc(format_ms(r.median_step->duration_ms)));
    s += html::step_strip(*r.median_step);
  }
  return s + "</section>\n";
}

std::string roofline_section(const Report& r) {
  std::vector<html::RoofPoint> points;
  for (const RooflineClass& c : r.roofline) {
    if (c.achieved_tflops && c.achieved_gbps && *c.achieved_gbps > 0 && *c.achieved_tflops > 0) {
      points.push_back({c.kernel_class, *c.achieved_tflops * 1e3 / *c.achieved_gbps, *c.achieved_tflops});
    }
  }
  if (r.roofline.empty()) return "";
  std::string s = "<section id=\"roofline\"><h2>Roofline of the kernel classes</h2>";
  const Ceilings c = r.devices.empty() ? Ceilings{} : r.devices[0].ceilings;
  if (!points.empty() && c.hbm_gbps) {
    std::vector<std::pair<std::string, double>> peaks;
    for (const auto& [name, v] : {std::pair<const char*, std::optional<double>>{"FP32", c.fp32_tflops},
                                  {"TF32", c.tf32_tflops},
                                  {"BF16", c.bf16_tflops}}) {
      if (v) peaks.emplace_back(name, *v);
    }
    s += html::roofline_chart(points, *c.hbm_gbps, peaks);
    s += "<p class=\"muted\">Ceilings: " + esc(c.source) + "</p>";
  }
  s +=
      "<table class=\"sortable\"><thead><tr><th>class</th><th class=\"n\">ms/step</th><th class=\"n\">% of step</th>"
      "<th class=\"n\">TFLOP/s</th><th class=\"n\">% of peak</th><th class=\"n\">GB/s</th><th class=\"n\">% of HBM</th>"
      "<th>bound</th></tr></thead><tbody>";
  auto opt = [](const std::optional<double>& v, int d) { return v ? html::fmt_num(*v, d) : std::string("-"); };
  for (const RooflineClass& x : r.roofline) {
    s += "<tr><td>" + esc(x.kernel_class) + "</td><td class=\"n\">" + html::fmt_num(x.ms_per_step, 2) +
         "</td><td class=\"n\">" + html::fmt_num(x.pct_of_step, 1) + "</td><td class=\"n\">" +
         opt(x.achieved_tflops, 1) + "</td><td class=\"n\">" + opt(x.pct_of_peak, 1) + "</td><td class=\"n\">" +
         opt(x.achieved_gbps, 0) + "</td><td class=\"n\">" + opt(x.pct_of_hbm, 1) + "</td><td>" + esc(x.bound) +
         "</td></tr>";
  }
  return s + "</tbody></table></section>\n";
}

std::string kernels_section(const Report& r) {
  if (r.top_kernels.empty()) return "";
  std::string s =
      "<section id=\"kernels\"><h2>Top kernels</h2><table class=\"sortable\"><thead><tr><th>kernel</th><th>class"
      "</th><th>precision</th><th>tensor cores</th><th class=\"n\">calls</th><th class=\"n\">total ms</th>"
      "<th class=\"n\">% of busy</th></tr></thead><tbody>";
  for (size_t i = 0; i < std::min(kMaxKernels, r.top_kernels.size()); ++i) {
    const KernelRow& k = r.top_kernels[i];
    const std::string tc = k.tensor_cores ? (*k.tensor_cores ? "yes" : "no") : "?";
    s += "<tr><td class=\"name mono\">" + esc(k.name) + "</td><td>" + esc(k.kernel_class) + "</td><td>" +
         esc(k.precision) + "</td><td>" + tc + "</td><td class=\"n\">" + std::to_string(k.calls) +
         "</td><td class=\"n\">" + html::fmt_num(k.total_ms, 2) + "</td><td class=\"n\">" +
         html::fmt_num(k.pct_of_busy, 1) + "</td></tr>";
  }
  return s + "</tbody></table></section>\n";
}

std::string hotspots_section(const Report& r) {
  if (!r.host) {
    return r.stacks_note.empty() ? ""
                                 : "<section id=\"host\"><h2>Host hot spots</h2><p class=\"muted\">" +
                                       esc(r.stacks_note) + "</p></section>\n";
  }
  const analyses::HostAttribution& h = *r.host;
  std::string s = "<section id=\"host\"><h2>Host hot spots</h2><p class=\"muted\">" + esc(h.method) + ", " +
                  esc(h.thread) + "</p>";
  s += "<table class=\"sortable\"><thead><tr><th>where</th><th>code</th><th>class</th><th class=\"n\">GPU idle s"
       "</th><th class=\"n\">on thread s</th><th class=\"n\">runs itself s</th></tr></thead><tbody>";
  for (const analyses::HotSpot* q : analyses::spots_to_show(h, kMaxHotSpots, 3)) {
    const analyses::HotSpot& p = *q;
    s += "<tr><td class=\"name mono\">" + esc(p.frame.file) + ":" + std::to_string(p.frame.line) + " " +
         esc(p.frame.function) + "</td><td class=\"mono\">" + esc(p.text) + "</td><td>" +
         esc(analyses::host_class_name(p.cls)) + "</td><td class=\"n\">" + html::fmt_num(p.idle_s, 3) +
         "</td><td class=\"n\">" + html::fmt_num(p.on_thread_s, 3) + "</td><td class=\"n\">" +
         html::fmt_num(p.own_on_thread_s, 3) + "</td></tr>";
  }
  return s + "</tbody></table></section>\n";
}

// The analysis time only with --timings, as in the JSON: the same input gives the same page.
std::string footer(const Report& r, bool timings) {
  std::string s = "<footer>chokepoint " + esc(r.tool_version) + " · inputs:";
  for (const InputInfo& in : r.inputs) s += " <span class=\"mono\">" + esc(in.path) + "</span>";
  if (timings) s += fmt::format(" · analyzed in {:.2f} s", r.analysis_seconds);
  return s + "</footer>\n";
}

}  // namespace

// Live samples and import warnings (html_live.cc).
std::string html_live_section(const Report& r);
std::string html_devices_section(const Report& r);
std::string html_import_section(const Report& r);

Status HtmlReporter::write(const Report& r, std::ostream& out, const RenderOptions& options) const {
  std::string title = "chokepoint: ";
  title += category_label(r.verdict.bound);
  // The sections after the verdict, each with its id: the links on top jump to them.
  const std::pair<const char*, std::string> parts[] = {{"What to change", remedies_section(r)},
                                                       {"Ranks", html_distributed_section(r)},
                                                       {"Where the step goes", breakdown_section(r)},
                                                       {"Findings", findings_section(r)},
                                                       {"Roofline", roofline_section(r)},
                                                       {"Top kernels", kernels_section(r)},
                                                       {"Host hot spots", hotspots_section(r)},
                                                       {"Live samples", html_live_section(r)},
                                                       {"Devices", html_devices_section(r)},
                                                       {"Import warnings", html_import_section(r)}};
  std::string nav = "<nav class=\"toc\">";
  for (const auto& [label, body] : parts) {
    const size_t id = body.find("id=\"");
    if (id == std::string::npos) continue;
    nav += "<a href=\"#" + body.substr(id + 4, body.find('"', id + 4) - id - 4) + "\">" + label + "</a>";
  }
  out << html::page_start(title) << "<h1>chokepoint report</h1>\n" << nav << "</nav>\n" << verdict_section(r);
  for (const auto& [label, body] : parts) out << body;
  out << footer(r, options.timings) << html::page_end();
  return out ? Status::Ok() : Status::Error("writing the HTML report failed");
}

}  // namespace chokepoint::report
