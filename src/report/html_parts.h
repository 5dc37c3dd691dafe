// Pieces of the HTML views (html_reporter.cc, diff_html.cc): escaping, the page frame
// (inline style for light, dark and print; a small inline script, no network), and the
// inline SVG charts. Every string from the input goes through esc() on its way out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace chokepoint::report::html {

// Text for an element or an attribute: control characters as escapes
// (base/terminal_text.h), invalid UTF-8 replaced, and & < > " ' as entities.
std::string esc(std::string_view s);

// The document up to <body> and after </body>: `title` is escaped here.
std::string page_start(std::string_view title);
std::string page_end();

// A stable colour (CSS custom property) for a breakdown name: categories, kernel
// classes and idle causes each keep theirs across charts.
std::string color_of(std::string_view name);

struct Segment {
  std::string name;
  double value = 0;
};

// One horizontal stacked bar with its legend; `unit` follows each value ("ms"). The full
// width is `full` when larger than the segments' sum (bars compared on one scale).
std::string stacked_bar(const std::vector<Segment>& segments, std::string_view unit, double full = 0);

// Dashed p50 and p95 lines across an SVG chart from x = left to width, at heights y_p50
// and y_p95, labelled with their values (ms): p50's on the left, p95's on the right.
std::string percentile_lines(double left, double width, double y_p50, double p50, double y_p95, double p95);

// Vertical bars (one per step) with dashed lines at p50 and p95.
std::string step_bars(const std::vector<double>& step_ms, const std::vector<int64_t>& numbers, double p50, double p95);

struct RoofPoint {
  std::string label;
  double intensity = 0;  // FLOP per byte
  double tflops = 0;
};

// Log-log roofline: the memory roof (hbm_gbps) up to each compute peak, and the points.
std::string roofline_chart(const std::vector<RoofPoint>& points, double hbm_gbps,
                           const std::vector<std::pair<std::string, double>>& peaks_tflops);

// One stacked bar per step (its busy parts by kernel class, its idle parts by cause),
// with dashed lines at p50 and p95.
std::string step_stacks(const std::vector<std::vector<Share>>& parts, const std::vector<int64_t>& numbers, double p50,
                        double p95);

// The median step as lanes (the launching thread, each stream, each device's idle gaps).
std::string step_strip(const StepStrip& strip);

// Line charts of sampled metrics over the run, one per LiveSeries::group (gaps break the
// lines); x in seconds from the first tick.
std::string time_charts(const std::vector<LiveSeries>& series, double bucket_s);

// Horizontal bars of named values 0..100 (%), one row each.
std::string pct_bars(const std::vector<Segment>& rows);

std::string fmt_num(double v, int decimals = 1);

}  // namespace chokepoint::report::html
