// Charts over time of the HTML report (html_parts.h): a recording's sampled metrics.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.h"

namespace chokepoint::report::html {
namespace {

// Drawn in a grid cell (about half the page): text stays readable at this width.
constexpr double kW = 480, kH = 180, kLeft = 40, kBottom = 20, kTop = 8;

// The polyline pieces of one series: a NaN ends a piece.
std::string lines(const std::vector<double>& v, double top, const std::string& color) {
  std::string s, points;
  const double dx = (kW - kLeft) / static_cast<double>(v.size() > 1 ? v.size() - 1 : 1);
  auto flush = [&] {
    if (!points.empty()) {
      s += "<polyline points=\"" + points + "\" style=\"fill:none;stroke:" + color + ";stroke-width:1.5\"/>";
    }
    points.clear();
  };
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) {
      flush();
      continue;
    }
    const double y = kTop + (kH - kBottom - kTop) * (1 - std::clamp(v[i] / top, 0.0, 1.0));
    points += fmt::format("{:.1f},{:.1f} ", kLeft + dx * static_cast<double>(i), y);
  }
  flush();
  return s;
}

std::string chart(const std::vector<const LiveSeries*>& group, double bucket_s) {
  double top = 0;
  size_t n = 0;
  for (const LiveSeries* s : group) {
    n = std::max(n, s->values.size());
    for (double v : s->values) {
      if (!std::isnan(v)) top = std::max(top, v);
    }
  }
  const bool pct = group.front()->unit == "%";
  top = pct ? std::max(100.0, top) : (top > 0 ? top * 1.1 : 1.0);
  std::string svg = fmt::format("<h3>{} ({})</h3><svg viewBox=\"0 0 {} {}\" role=\"img\" class=\"timeseries\">",
                                esc(group.front()->group), esc(group.front()->unit), kW, kH);
  for (int t = 0; t <= 2; ++t) {
    const double y = kTop + (kH - kBottom - kTop) * (1 - t / 2.0);
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" style=\"stroke:var(--line)\"/><text x=\"{}\" "
        "y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
        kLeft, kW, y, y, kLeft - 4, y + 4, fmt_num(top * t / 2, 0));
  }
  const double total_s = bucket_s * static_cast<double>(n);
  svg += fmt::format("<text x=\"{}\" y=\"{}\">0 s</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} s</text>", kLeft,
                     kH - 4, kW, kH - 4, fmt_num(total_s, 1));
  std::string legend = "<div class=\"legend\">";
  for (size_t i = 0; i < group.size(); ++i) {
    const std::string color = fmt::format("var(--c{})", i % 10);
    svg += lines(group[i]->values, top, color);
    legend += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", color, esc(group[i]->name));
  }
  return svg + "</svg>" + legend + "</div>";
}

}  // namespace

std::string time_charts(const std::vector<LiveSeries>& series, double bucket_s) {
  std::string s;
  for (size_t i = 0; i < series.size();) {
    std::vector<const LiveSeries*> group;
    size_t j = i;
    while (j < series.size() && series[j].group == series[i].group) group.push_back(&series[j++]);
    s += "<div>" + chart(group, bucket_s) + "</div>";
    i = j;
  }
  return s;
}

}  // namespace chokepoint::report::html
