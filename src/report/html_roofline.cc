// The roofline chart of the HTML views (html_parts.h): log-log, arithmetic intensity
// (FLOP per byte of DRAM traffic) against achieved TFLOP/s, under the memory roof
// (HBM bandwidth x intensity) and each compute peak of the device.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.h"

namespace chokepoint::report::html {
namespace {

constexpr double kW = 1000, kH = 420, kLeft = 70, kBottom = 40, kTop = 10, kRight = 20;

struct Axes {
  double x_lo, x_hi, y_lo, y_hi;  // log10 of the range
  double x(double v) const { return kLeft + (kW - kLeft - kRight) * (std::log10(v) - x_lo) / (x_hi - x_lo); }
  double y(double v) const { return kTop + (kH - kTop - kBottom) * (1 - (std::log10(v) - y_lo) / (y_hi - y_lo)); }
};

Axes axes_for(const std::vector<RoofPoint>& points, double hbm_tbps, double max_peak) {
  double x_lo = 0.1, x_hi = 1000, y_lo = 0.01, y_hi = std::max(1.0, max_peak * 2);
  for (const RoofPoint& p : points) {
    x_lo = std::min(x_lo, p.intensity / 2);
    x_hi = std::max(x_hi, p.intensity * 2);
    y_lo = std::min(y_lo, p.tflops / 2);
  }
  if (hbm_tbps > 0) x_hi = std::max(x_hi, max_peak / hbm_tbps * 4);
  return {std::floor(std::log10(x_lo)), std::ceil(std::log10(x_hi)), std::floor(std::log10(y_lo)),
          std::ceil(std::log10(y_hi))};
}

std::string grid(const Axes& a) {
  std::string s;
  for (double e = a.x_lo; e <= a.x_hi; e += 1) {
    const double x = a.x(std::pow(10, e));
    s += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" style=\"stroke:var(--line)\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>",
        x, kTop, kH - kBottom, kH - kBottom + 14, std::pow(10, e));
  }
  for (double e = a.y_lo; e <= a.y_hi; e += 1) {
    const double y = a.y(std::pow(10, e));
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" style=\"stroke:var(--line)\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>",
        kLeft, kW - kRight, y, kLeft - 4, y + 4, std::pow(10, e));
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte)</text>"
      "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">TFLOP/s</text>",
      (kW + kLeft) / 2, kH - 4, kH / 2, kH / 2);
  return s;
}

}  // namespace

std::string roofline_chart(const std::vector<RoofPoint>& points, double hbm_gbps,
                           const std::vector<std::pair<std::string, double>>& peaks_tflops) {
  double max_peak = 0;
  for (const auto& [name, p] : peaks_tflops) max_peak = std::max(max_peak, p);
  const double hbm_tbps = hbm_gbps / 1000;  // TFLOP/s per (FLOP/byte) = TB/s
  const Axes a = axes_for(points, hbm_tbps, max_peak);
  std::string s = fmt::format("<svg viewBox=\"0 0 {} {}\" role=\"img\" class=\"roofline\">", kW, kH) + grid(a);
  const double x_min = std::pow(10, a.x_lo), x_max = std::pow(10, a.x_hi);
  for (const auto& [name, peak] : peaks_tflops) {
    if (peak <= 0) continue;
    // The roof: bandwidth-bound up to the ridge point, flat at the peak after it.
    const double ridge = hbm_tbps > 0 ? std::max(x_min, peak / hbm_tbps) : x_min;
    const double start_y = hbm_tbps > 0 ? std::max(std::pow(10, a.y_lo), x_min * hbm_tbps) : peak;
    const double start_x = hbm_tbps > 0 ? start_y / hbm_tbps : x_min;
    s += fmt::format(
        "<polyline points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" style=\"fill:none;stroke:var(--muted);"
        "stroke-width:1.5\"/><text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{} {:g} TFLOP/s</text>",
        a.x(start_x), a.y(start_y), a.x(ridge), a.y(peak), a.x(x_max), a.y(peak), a.x(x_max) - 4, a.y(peak) - 4,
        esc(name), peak);
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const RoofPoint& p = points[i];
    if (p.intensity <= 0 || p.tflops <= 0) continue;
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" style=\"fill:{}\"><title>{}: {:.3g} FLOP/B, {:.3g} TFLOP/s"
        "</title></circle><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
        a.x(p.intensity), a.y(p.tflops), color_of(p.label), esc(p.label), p.intensity, p.tflops, a.x(p.intensity) + 8,
        a.y(p.tflops) + 4, esc(p.label));
  }
  return s + "</svg>";
}

}  // namespace chokepoint::report::html
