#include "report/format_util.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace chokepoint::report {

double round_significant(double v, int digits) {
  if (!std::isfinite(v)) return v;
  if (v == 0) return 0.0;  // also turns -0 into 0
  // Through decimal text rather than pow/round arithmetic: the result is then the double
  // nearest to the short decimal, which JSON writers print back as that short decimal.
  const std::string text = fmt::format("{:.{}g}", v, digits);
  double out = v;
  std::from_chars(text.data(), text.data() + text.size(), out);
  return out == 0 ? 0.0 : out;
}

namespace {

// Inserts thousands separators into the integer part of a plain decimal string.
std::string group_thousands(std::string digits) {
  const size_t start = (!digits.empty() && digits[0] == '-') ? 1 : 0;
  size_t end = digits.find('.');
  if (end == std::string::npos) end = digits.size();
  for (size_t i = end; i > start + 3; i -= 3) digits.insert(i - 3, 1, ',');
  return digits;
}

}  // namespace

std::string format_number(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  if (a >= 1000 || (a >= 1 && v == std::floor(v)) || a == 0) return format_decimal(v, 0);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string format_decimal(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  return group_thousands(fmt::format("{:.{}f}", v, decimals));
}

int column_decimals(double max_abs) {
  if (!std::isfinite(max_abs) || max_abs >= 100) return 1;
  return max_abs >= 1 ? 2 : 3;
}

std::string format_count(int64_t n) { return group_thousands(std::to_string(n)); }

std::string format_pct(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  if (pct > 0 && pct < 0.05) return "<0.1%";
  return fmt::format("{:.1f}%", pct);
}

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "n/a";
  // Under a microsecond: below what a trace's timestamps resolve ("5.71e-05 ms" in a ranks table).
  if (ms > 0 && ms < 0.001) return "<0.001 ms";
  return format_number(ms) + " ms";
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s < 1) return fmt::format("{:.0f} ms", s * 1000);
  return fmt::format("{:.2f} s", s);
}

std::string format_bytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(v) >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string format_speedup(double x) {
  if (!std::isfinite(x)) return "n/a";
  return x < 2 ? fmt::format("{:.2f}x", x) : fmt::format("{:.1f}x", x);
}

std::string format_ratio(double x) {
  if (!std::isfinite(x)) return "n/a";
  const double a = std::fabs(x);
  if (a >= 100) return fmt::format("{:.0f}x", x);
  if (a >= 10) return fmt::format("{:.1f}x", x);
  if (a >= 1) return fmt::format("{:.2f}x", x);
  return fmt::format("{:.3g}x", x);
}

std::string format_speedup_range(double x, std::optional<double> other_end) {
  if (!other_end || !std::isfinite(*other_end) || !std::isfinite(x)) return format_speedup(x);
  const std::string lo = format_speedup(std::min(x, *other_end)), hi = format_speedup(std::max(x, *other_end));
  if (lo == hi) return hi;
  return lo.substr(0, lo.size() - 1) + "-" + hi;
}

std::string format_value(double v, std::string_view unit) {
  if (!std::isfinite(v)) return "n/a";  // no unit after "n/a"
  if (unit == "%") return format_pct(v);
  if (unit == "ms") return format_ms(v);
  if (unit == "x") return format_speedup(v);
  if (unit.empty()) return format_number(v);
  return format_number(v) + " " + std::string(unit);
}

std::optional<double> gpu_ms_per_step(const Window& w, double pct) {
  if (w.steps <= 0 || !(w.analyzed_ms > 0) || !std::isfinite(pct)) return std::nullopt;
  return w.analyzed_ms / static_cast<double>(w.steps) * pct / 100.0;
}

std::vector<Share> sorted_by_pct(std::vector<Share> shares) {
  std::stable_sort(shares.begin(), shares.end(), [](const Share& a, const Share& b) { return a.pct > b.pct; });
  return shares;
}

const char* category_label(rules::Category c) {
  using rules::Category;
  switch (c) {
    case Category::kInput: return "input (data loading)";
    case Category::kHost: return "host (CPU-side overhead)";
    case Category::kSync: return "sync (host-device synchronization)";
    case Category::kTransfer: return "transfer (host<->device copies)";
    case Category::kCompute: return "compute (GPU arithmetic)";
    case Category::kMemory: return "memory (GPU memory bandwidth)";
    case Category::kCommunication: return "communication (collectives)";
    case Category::kIo: return "io (storage)";
    case Category::kIdle: return "idle (nothing runs)";
    case Category::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string humanize(std::string_view key) {
  std::string out(key);
  for (char& ch : out) {
    if (ch == '_') ch = ' ';
  }
  return out;
}

std::string already_on_text(const Report& r) {
  std::string s;
  for (const std::string& id : r.already_on) s += (s.empty() ? "" : ", ") + id;
  return s;
}

std::string profiler_window_text(const ProfilerWindow& w) {
  const size_t slash = w.path.find_last_of('/');
  const std::string file = slash == std::string::npos ? w.path : w.path.substr(slash + 1);
  const std::string steps = w.steps == 1 ? fmt::format("step {}", w.first_step)
                                         : fmt::format("steps {}-{}", w.first_step, w.last_step);
  return fmt::format("{}: {}, p50 {}, p95 {}, GPU busy {}", file, steps, format_ms(w.step_time_ms.p50),
                     format_ms(w.step_time_ms.p95), format_pct(w.gpu_busy_pct));
}

std::string data_lost_text(const DataLoss& l) {
  return fmt::format("{} of {} {} ({})", format_count(l.lost), format_count(l.total), l.what,
                     format_pct(100 * l.share()));
}

std::string format_threshold(const rules::Evidence& e) {
  if (!e.threshold) return "";
  std::string s;  // built in steps: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string
  switch (e.side) {
    case rules::ThresholdSide::kAtLeast: s = "≥ "; break;
    case rules::ThresholdSide::kAtMost: s = "≤ "; break;
    case rules::ThresholdSide::kCeiling: s = "ceiling "; break;
  }
  s += format_value(*e.threshold, e.unit);
  return s;
}

bool no_gpu(const Report& r) {
  return r.devices.empty() && r.breakdown.busy_by_class.empty() && r.breakdown.gpu_busy_pct <= 0 &&
         r.top_kernels.empty();
}

}  // namespace chokepoint::report
