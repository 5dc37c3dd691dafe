#include "report/html_parts.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "report/csp_hash.h"
#include "report/format_util.h"

namespace chokepoint::report::html {
namespace {

// Light by default, dark under prefers-color-scheme; print drops backgrounds and keeps
// sections whole. Widths in rem and % so that it fits a laptop screen without scrolling
// sideways.
constexpr const char* kStyle = R"css(
:root{--bg:#fff;--fg:#1d2430;--muted:#5b6577;--card:#f5f7fa;--line:#d9dee7;--accent:#1f6feb;
--crit:#c62828;--warn:#b26a00;--info:#4a5568;--ok:#2e7d32;
--c0:#1f77b4;--c1:#ff7f0e;--c2:#2ca02c;--c3:#d62728;--c4:#9467bd;--c5:#8c564b;--c6:#e377c2;--c7:#7f7f7f;--c8:#bcbd22;--c9:#17becf}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--fg:#e6e9ef;--muted:#9aa5b8;--card:#1a2029;--line:#2d3543;
--accent:#58a6ff;--crit:#ff6b6b;--warn:#f0b429;--info:#a0aec0;--ok:#68d391}}
*{box-sizing:border-box}body{margin:0 auto;max-width:78rem;padding:1rem 1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:.8rem 0 .3rem}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
.verdict{background:var(--card);border-left:.35rem solid var(--accent);padding:.8rem 1rem;border-radius:.3rem}
.verdict .bound{font-size:1.35rem;font-weight:700}.muted{color:var(--muted)}
.remedy{border:1px solid var(--line);border-radius:.3rem;padding:.6rem .9rem;margin:.5rem 0}
.remedy .gain{float:right;font-weight:700;color:var(--ok)}
.badge{display:inline-block;padding:0 .45rem;border-radius:.7rem;font-size:.75rem;font-weight:700;color:#fff;margin-right:.4rem}
.critical{background:var(--crit)}.warning{background:var(--warn)}.info{background:var(--info)}
table{border-collapse:collapse;width:100%;font-size:.88rem;margin:.3rem 0}th,td{padding:.25rem .45rem;
border-bottom:1px solid var(--line);text-align:left;vertical-align:top}td.n,th.n{text-align:right;white-space:nowrap}
th{cursor:pointer;user-select:none}td.name{word-break:break-all;max-width:38rem}
svg{max-width:100%;height:auto;display:block}svg text{fill:var(--fg);font-size:11px}
.legend span{display:inline-block;margin:.1rem .8rem .1rem 0;font-size:.85rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-.1rem;border-radius:.15rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(22rem,1fr));gap:1rem}
.toc{font-size:.85rem;margin:.2rem 0 .6rem}.toc a{color:var(--accent);margin-right:.9rem;text-decoration:none}
details{margin:.3rem 0}footer{margin-top:2rem;font-size:.8rem;color:var(--muted)}
@media print{body{max-width:none;padding:0;font-size:11px}:root{--bg:#fff;--fg:#000;--card:#fff}
section,.remedy,table,svg{break-inside:avoid}.toc{display:none}details{display:block}details>*{display:block}th{cursor:auto}}
)css";

// Click a header to sort its table (numbers by value); marks the page ready for tests.
constexpr const char* kScript = R"js(
(function(){
  function key(td){var t=td.getAttribute('data-v');if(t===null)t=td.textContent;var n=parseFloat(t);return isNaN(n)?t:n;}
  document.querySelectorAll('table.sortable th').forEach(function(th,col){
    th.addEventListener('click',function(){
      var tb=th.closest('table').tBodies[0];var rows=Array.prototype.slice.call(tb.rows);
      var dir=th.getAttribute('data-dir')==='a'?-1:1;th.setAttribute('data-dir',dir>0?'a':'d');
      rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);return (x>y?1:x<y?-1:0)*dir;});
      rows.forEach(function(r){tb.appendChild(r);});
    });
  });
  document.documentElement.setAttribute('data-ready','1');
})();
)js";

// Fixed colours: GPU work in cool tones, idle causes and what the CPU waits in warm ones,
// the same name the same colour in every chart (readable on light and dark).
constexpr std::pair<std::string_view, std::string_view> kColors[] = {
    {"gemm", "#1f77b4"},
    {"conv", "#17becf"},
    {"attention", "#9467bd"},
    {"elementwise", "#2ca02c"},
    {"reduction", "#bcbd22"},
    {"normalization", "#8c564b"},
    {"copy", "#7f7f7f"},
    {"communication", "#e377c2"},
    {"other", "#aec7e8"},
    {"idle:input", "#d62728"},
    {"idle:sync", "#ff7f0e"},
    {"idle:allocator", "#ff9896"},
    {"idle:launch_overhead", "#ffbb78"},
    {"idle:host_work", "#f7b6d2"},
    {"idle:gpu_wait", "#c49c94"},
    {"idle:nothing_queued", "#b0b0b0"},
    {"idle:unknown", "#c7c7c7"},
    {"aten_op", "#9edae5"},
    {"cuda_api", "#98df8a"},
    {"allocator", "#ff9896"},
    {"sync", "#ff7f0e"},
    {"dataloader", "#d62728"},
    {"compute", "#1f77b4"},
    {"memory", "#2ca02c"},
    {"input", "#d62728"},
    {"host", "#ffbb78"},
    {"transfer", "#7f7f7f"},
    {"io", "#8c564b"},
    {"idle", "#b0b0b0"},
    {"unknown", "#c7c7c7"},
};

}  // namespace

std::string esc(std::string_view s) {
  std::string out;
  for (char c : escape_controls(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string page_start(std::string_view title) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may leave the file (no fetch, no image, no font from anywhere else, no form
  // sent, no base URL), and only the page's own script and style block run: allowed by
  // their hashes, so a script or form that a hostile name might smuggle in is refused.
  // Style attributes (the charts' colours) cannot run code and stay allowed.
  static const std::string policy = "default-src 'none'; script-src " + csp_hash_source(kScript) + "; style-src " +
                                    csp_hash_source(kStyle) + "; style-src-elem " + csp_hash_source(kStyle) +
                                    "; style-src-attr 'unsafe-inline'; img-src data:; form-action 'none'; "
                                    "base-uri 'none'";
  s += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + policy + "\">\n";
  s += "<meta name=\"color-scheme\" content=\"light dark\">\n<title>";
  s += esc(title);
  s += "</title>\n<style>";
  s += kStyle;
  s += "</style>\n</head>\n<body>\n";
  return s;
}

std::string page_end() {
  std::string s = "<script>";
  s += kScript;
  s += "</script>\n</body>\n</html>\n";
  return s;
}

std::string color_of(std::string_view name) {
  for (const auto& [key, color] : kColors) {
    if (name == key) return std::string(color);
  }
  size_t h = 0;  // others: a hash of the name, stable across runs
  for (char c : name) h = h * 31 + static_cast<unsigned char>(c);
  return fmt::format("var(--c{})", h % 10);
}

std::string fmt_num(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  return format_decimal(v, decimals);
}

std::string stacked_bar(const std::vector<Segment>& segments, std::string_view unit, double full) {
  double total = 0;
  for (const Segment& s : segments) total += std::max(0.0, s.value);
  if (total <= 0) return "<p class=\"muted\">nothing to show</p>";
  total = std::max(total, full);
  constexpr double kWidth = 1000, kHeight = 34;
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" role=\"img\" class=\"stacked\">", kWidth, kHeight);
  std::string legend = "<div class=\"legend\">";
  double x = 0;
  for (const Segment& s : segments) {
    if (s.value <= 0) continue;
    const double w = kWidth * s.value / total;
    const std::string label = esc(humanize(s.name)) + " " + fmt_num(s.value, 2) + " " + std::string(unit);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"2\" width=\"{:.1f}\" height=\"{}\" style=\"fill:{}\"><title>{}</title></rect>", x, w,
        kHeight - 4, color_of(s.name), label);
    x += w;
    legend += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", color_of(s.name), label);
  }
  return svg + "</svg>" + legend + "</div>";
}

std::string percentile_lines(double left, double width, double y_p50, double p50, double y_p95, double p95) {
  std::string svg;
  // p50's label on the left, p95's on the right: close lines keep both readable.
  for (const auto& [label, v, y] : {std::tuple<const char*, double, double>{"p50", p50, y_p50}, {"p95", p95, y_p95}}) {
    const bool on_left = label == std::string_view("p50");
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" style=\"stroke:var(--fg);stroke-dasharray:5 4\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"{}\">{} {}</text>",
        left, width, y, y, on_left ? 2.0 : width - 2, y - 3, on_left ? "start" : "end", label, fmt_num(v, 1));
  }
  return svg;
}

std::string step_bars(const std::vector<double>& step_ms, const std::vector<int64_t>& numbers, double p50, double p95) {
  if (step_ms.empty()) return "<p class=\"muted\">no per-step times</p>";
  const double top = std::max(p95, *std::max_element(step_ms.begin(), step_ms.end())) * 1.1;
  constexpr double kW = 1000, kH = 160, kLeft = 50, kBottom = 20;
  const double bw = (kW - kLeft) / static_cast<double>(step_ms.size());
  auto y = [&](double v) { return (kH - kBottom) * (1 - v / top); };
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" role=\"img\" class=\"steps\">", kW, kH);
  for (size_t i = 0; i < step_ms.size(); ++i) {
    const std::string n = i < numbers.size() ? std::to_string(numbers[i]) : std::to_string(i);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" style=\"fill:var(--accent)\">"
        "<title>step {}: {} ms</title></rect>",
        kLeft + bw * static_cast<double>(i) + bw * 0.1, y(step_ms[i]), bw * 0.8, (kH - kBottom) - y(step_ms[i]), n,
        fmt_num(step_ms[i], 2));
    if (step_ms.size() <= 40) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         kLeft + bw * (static_cast<double>(i) + 0.5), kH - 5, n);
    }
  }
  svg += percentile_lines(kLeft, kW, y(p50), p50, y(p95), p95);
  return svg + "</svg>";
}

std::string pct_bars(const std::vector<Segment>& rows) {
  if (rows.empty()) return "";
  constexpr double kW = 480, kRow = 22, kLabel = 130;  // drawn in a grid cell
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {:.0f}\" role=\"img\">", kW,
                                kRow * static_cast<double>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const double v = std::clamp(rows[i].value, 0.0, 100.0);
    const double yy = kRow * static_cast<double>(i);
    svg += fmt::format(
        "<text x=\"0\" y=\"{:.0f}\">{}</text><rect x=\"{}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
        "style=\"fill:var(--accent)\"/><text x=\"{:.1f}\" y=\"{:.0f}\">{}%</text>",
        yy + 15, esc(rows[i].name), kLabel, yy + 4, (kW - kLabel - 60) * v / 100, kRow - 8,
        kLabel + (kW - kLabel - 60) * v / 100 + 4, yy + 15, fmt_num(rows[i].value, 1));
  }
  return svg + "</svg>";
}

}  // namespace chokepoint::report::html
