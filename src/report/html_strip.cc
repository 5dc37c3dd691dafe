// Step charts of the HTML report (html_parts.h): a stacked bar per step, and the strip
// of the median step.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "report/format_util.h"
#include "report/html_parts.h"

namespace chokepoint::report::html {
namespace {

constexpr double kW = 1000, kLabel = 190;

std::string legend(const std::vector<std::string>& names) {
  std::string s = "<div class=\"legend\">";
  for (const std::string& n : names) {
    s += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", color_of(n), esc(humanize(n)));
  }
  return s + "</div>";
}

void add_name(std::vector<std::string>& names, std::set<std::string>& seen, const std::string& n) {
  if (seen.insert(n).second) names.push_back(n);
}

std::string lane_rects(const StripLane& lane, double y, double scale) {
  std::string s;
  for (const StripSpan& sp : lane.spans) {
    const double x = kLabel + sp.start_ms * scale;
    const double w = std::max(0.5, (sp.end_ms - sp.start_ms) * scale);
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"14\" style=\"fill:{}\"><title>{} {:.3f}-{:.3f} ms"
        "{}{}</title></rect>",
        x, y, w, color_of(sp.kind), esc(humanize(sp.kind)), sp.start_ms, sp.end_ms, sp.label.empty() ? "" : ": ",
        esc(sp.label));
  }
  return s;
}

}  // namespace

std::string step_stacks(const std::vector<std::vector<Share>>& parts, const std::vector<int64_t>& numbers, double p50,
                        double p95) {
  if (parts.empty()) return "";
  constexpr double kH = 180, kLeft = 60, kBottom = 20;
  double top = p95;
  for (const auto& step : parts) {
    double sum = 0;
    for (const Share& s : step) sum += s.ms_per_step;
    top = std::max(top, sum);
  }
  top *= 1.1;
  if (top <= 0) return "";
  auto y = [&](double v) { return (kH - kBottom) * (1 - v / top); };
  const double bw = (kW - kLeft) / static_cast<double>(parts.size());
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" role=\"img\" class=\"step-stacks\">", kW, kH);
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string n = i < numbers.size() ? std::to_string(numbers[i]) : std::to_string(i);
    double base = 0;
    for (const Share& s : parts[i]) {
      add_name(names, seen, s.name);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.2f}\" style=\"fill:{}\"><title>step {}: {} "
          "{} ms</title></rect>",
          kLeft + bw * static_cast<double>(i) + bw * 0.1, y(base + s.ms_per_step), bw * 0.8,
          y(base) - y(base + s.ms_per_step), color_of(s.name), n, esc(humanize(s.name)), fmt_num(s.ms_per_step, 2));
      base += s.ms_per_step;
    }
    if (parts.size() <= 40) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         kLeft + bw * (static_cast<double>(i) + 0.5), kH - 5, n);
    }
  }
  svg += percentile_lines(kLeft, kW, y(p50), p50, y(p95), p95);
  return svg + "</svg>" + legend(names);
}

std::string step_strip(const StepStrip& strip) {
  if (strip.lanes.empty() || strip.duration_ms <= 0) return "";
  constexpr double kRow = 20, kAxis = 18;
  const double h = kRow * static_cast<double>(strip.lanes.size()) + kAxis;
  const double scale = (kW - kLabel - 5) / strip.duration_ms;
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {:.0f}\" role=\"img\" class=\"strip\">", kW, h);
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (size_t i = 0; i < strip.lanes.size(); ++i) {
    const StripLane& lane = strip.lanes[i];
    const double y = kRow * static_cast<double>(i);
    svg += fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text>", y + 12, esc(lane.name));
    svg += lane_rects(lane, y + 1, scale);
    for (const StripSpan& sp : lane.spans) add_name(names, seen, sp.kind);
  }
  for (int t = 0; t <= 4; ++t) {
    const double v = strip.duration_ms * t / 4;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"{}\">{} ms</text>", kLabel + v * scale, h - 4,
                       t == 0 ? "start" : (t == 4 ? "end" : "middle"), fmt_num(v, 2));
  }
  return svg + "</svg>" + legend(names);
}

}  // namespace chokepoint::report::html
