// Number and label formatting shared by the reporters, so that text, Markdown and JSON
// round and name a value the same way. Human formatters print "n/a" for NaN/inf; the
// JSON side uses round_significant() and turns non-finite values into null itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "rules/finding.h"
#include "timeline/import_stats.h"

namespace chokepoint::report {

// Significant digits kept in JSON floats: enough for any decision, few enough that a
// golden comparison does not break on the last bits of a sum.
inline constexpr int kJsonSignificantDigits = 4;

// `v` rounded to `digits` significant digits (the nearest double to the decimal), with
// -0 normalized to 0. Non-finite values are returned unchanged.
double round_significant(double v, int digits = kJsonSignificantDigits);

// A free-standing value: "3" (integers), "1,234", "259.7", "12.8", "7.93", "0.0123";
// "n/a" when not finite.
std::string format_number(double v);
// A table column value with fixed decimals, so that a column lines up: "1,234.5".
std::string format_decimal(double v, int decimals);
// Decimals for a column whose largest magnitude is `max_abs`: 1 from 100 up, 2 from 1,
// else 3, so that a 2.7 ms step's rows do not all read "0.2".
int column_decimals(double max_abs);
// Integers with thousands separators: "184,220".
std::string format_count(int64_t n);
// A percentage with one decimal: "63.0%"; a non-zero share that rounds to 0 is "<0.1%".
std::string format_pct(double pct);
// Milliseconds, as format_number: "259.7 ms", "5 ms", "1,250 ms".
std::string format_ms(double ms);
// Seconds for durations of the tool itself: "1.42 s", "350 ms".
std::string format_seconds(double s);
// Binary units, as nvidia-smi reports memory: "12.3 MiB", "139.8 GiB".
std::string format_bytes(int64_t bytes);
// A step speedup: "1.05x", "3.1x" (two decimals below 2x, where the difference matters).
std::string format_speedup(double x);
// The order of "What to change", stated where the list is shown (rules/diagnose.cc ranks
// the remedies: the headline first, then by estimate).
inline constexpr const char* kRemedyOrder =
    "first the largest gain that keeps the training as it is, then the rest by estimate; a samples/s estimate is "
    "not a step-time one";

// A measured ratio to 3 significant figures, as `diff` prints its step change: "1.93x",
// "13.3x", "0.986x", "131x".
std::string format_ratio(double x);
// An estimate that may be a range (the other end from the recorder's cost, rules::RemedyAdvice):
// "11.6-14.7x", "1.89-2.2x", else format_speedup of `x`.
std::string format_speedup_range(double x, std::optional<double> other_end);
// A value with its unit, spaced the way people write it: "63.0%", "2.1x", "12.5 GB/s".
std::string format_value(double v, std::string_view unit);
// An evidence's threshold with the side that counts: "≥ 20.0%", "≤ 3.0%", or
// "ceiling 4,800 GB/s" for one it is only compared with; "" without a threshold.
std::string format_threshold(const rules::Evidence& e);
// Whether the input had no GPU at all (no device, no GPU work): GPU busy/idle figures are
// then unknown, not 0% and 100%.
bool no_gpu(const Report& r);

// "torch-compile, fused-optimizer": what the trace shows already on, not advised ("" none).
std::string already_on_text(const Report& r);

// One profiler window in words, the same in every view: "w2.pt.trace.json: steps 100-107,
// p50 12.8 ms, p95 13.1 ms, GPU busy 63%".
std::string profiler_window_text(const ProfilerWindow& w);

// "65 of 328 GPU events with a negative or missing duration (20%)".
std::string data_lost_text(const DataLoss& l);

// Derived values the human formats show alike.
// Milliseconds per step of a share (in %) of the analyzed time; none without steps.
std::optional<double> gpu_ms_per_step(const Window& w, double pct);
// `shares` largest first, for display (the report keeps its own order).
std::vector<Share> sorted_by_pct(std::vector<Share> shares);

// The category with a short gloss for readers: "input (data loading)".
const char* category_label(rules::Category c);
// "info", "warning", "error".
// A key for humans: "launch_overhead" -> "launch overhead".
std::string humanize(std::string_view key);

}  // namespace chokepoint::report
