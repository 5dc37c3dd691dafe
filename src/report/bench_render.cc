#include "report/bench_render.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "base/terminal_text.h"
#include "machine/verdicts.h"

namespace chokepoint::report {
namespace {

// A profile's strings (GPU names, sysfs values, errors of the module, a saved profile
// read back) reach the terminal with their control characters as escapes.
std::string safe(const std::string& s) { return escape_controls(s); }

constexpr int kKeyCol = 22;
constexpr int kValueCol = 15;
constexpr int kPctCol = 6;

std::string version_text(int v) {  // 13000 -> "13.0"
  if (v <= 0) return "?";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string cublaslt_text(int v) {  // 130100 -> "13.1.0"
  if (v <= 0) return "not found";
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

std::string verdict_text(const machine::Measurement& m, const Style& style) {
  if (m.verdict == machine::kVerdictOk) return style(Tone::kGreen, "ok");
  if (m.verdict == machine::kVerdictBelowPar) {
    return style(Tone::kRedBench,
                 m.par_pct ? fmt::format("BELOW PAR (<{:.0f}%)", *m.par_pct) : std::string("BELOW PAR"));
  }
  if (m.verdict == machine::kVerdictAbovePublished) return style(Tone::kYellow, "above published");
  if (m.verdict == machine::kVerdictFailed) return style(Tone::kRedBench, "FAILED");
  if (m.verdict == machine::kVerdictWaived) return style(Tone::kDim, "waived");
  return m.verdict.empty() ? std::string("-") : safe(m.verdict);
}

// Greedy word wrap with a hanging indent.
void wrap(std::ostringstream& out, const std::string& text, int indent, int width) {
  const int avail = std::max(30, width - indent);
  std::istringstream words(safe(text));
  std::string w, line;
  auto flush = [&] {
    out << std::string(indent, ' ') << line << "\n";
    line.clear();
  };
  while (words >> w) {
    if (!line.empty() && static_cast<int>(line.size() + 1 + w.size()) > avail) flush();
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) flush();
}

std::string pad(const std::string& s, int n) {
  return static_cast<int>(s.size()) >= n ? s + " " : s + std::string(n - s.size(), ' ');
}

std::string lpad(const std::string& s, int n) {
  return static_cast<int>(s.size()) >= n ? s + " " : std::string(n - s.size(), ' ') + s;
}

std::string gpu_header(const machine::GpuProfile& g) {
  std::string s = fmt::format("GPU {}  {}", g.index, g.name.empty() ? "?" : g.name);
  std::vector<std::string> parts;
  if (g.cc_major >= 0) parts.push_back(fmt::format("cc {}.{}", g.cc_major, g.cc_minor));
  if (g.num_sms > 0) parts.push_back(fmt::format("{} SMs", g.num_sms));
  if (g.memory_bytes > 0) parts.push_back(fmt::format("{:.0f} GiB", g.memory_bytes / 1073741824.0));
  if (g.l2_bytes > 0) parts.push_back(fmt::format("L2 {:.0f} MiB", g.l2_bytes / 1048576.0));
  if (g.sm_clock_max_mhz > 0) parts.push_back(fmt::format("SM clock max {} MHz", g.sm_clock_max_mhz));
  if (g.sm_clock_under_load_mhz) parts.push_back(fmt::format("{:.0f} MHz under FFMA load", *g.sm_clock_under_load_mhz));
  if (!g.pcie_speed_under_load.empty()) {
    std::string speed = g.pcie_speed_under_load;  // sysfs: "32.0 GT/s PCIe"
    if (const auto at = speed.find(" PCIe"); at != std::string::npos) speed.erase(at);
    parts.push_back(fmt::format("PCIe {} x{} under load", speed, g.pcie_width_under_load));
  }
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
  if (!joined.empty()) s += "  (" + joined + ")";
  return safe(s);
}

// One row of the table and, under it, the cause when not ok (and the note on request).
void render_result(std::ostringstream& out, const machine::Measurement& m, const RenderOptions& o) {
  const std::string measured = m.value && m.status == machine::ResultStatus::kOk
                                   ? safe(format_measured(*m.value, m.unit))
                                   : "-";
  const std::string ref = m.reference ? safe(format_measured(*m.reference, m.unit)) : "-";
  const std::string pct = m.pct_of_reference ? fmt::format("{:.0f}%", *m.pct_of_reference) : "-";
  out << "  " << pad(safe(m.key), kKeyCol) << lpad(measured, kValueCol) << lpad(ref, kValueCol) << lpad(pct, kPctCol)
      << "  " << verdict_text(m, Style(o)) << "\n";
  const bool explain = m.verdict != machine::kVerdictOk && !m.cause.empty();
  if (explain) {
    // The engine's rules behind the cause, as doctor, run and analyze name them
    // (`chokepoint explain <id>`).
    std::string rules;
    for (const auto& r : m.cause_rules) rules += (rules.empty() ? " [" : ", ") + r;
    wrap(out, m.cause + (rules.empty() ? "" : rules + "]"), 6, o.width);
  }
  if (o.notes && !m.note.empty() && m.note != m.cause) wrap(out, "(" + m.note + ")", 6, o.width);
}

void render_ridge_points(std::ostringstream& out, const machine::GpuProfile& g) {
  if (g.ridge_points.empty()) return;
  out << "\n  Roofline ridge points (FLOP per byte of DRAM traffic at "
      << format_measured(g.ridge_points.front().hbm_gbps, "GB/s") << "; kernels below it are memory-bound):\n";
  for (const auto& r : g.ridge_points) {
    std::string line = fmt::format("    {:<5} {:>6.0f}", safe(r.precision), r.flop_per_byte);
    if (r.published_flop_per_byte) line += fmt::format("   (published {:.0f})", *r.published_flop_per_byte);
    out << line << "\n";
  }
}

void render_gpu(std::ostringstream& out, const machine::GpuProfile& g, const RenderOptions& o) {
  out << "\n" << gpu_header(g) << "\n";
  if (!g.published_gpu.empty()) out << "  compared with the published figures of " << safe(g.published_gpu) << "\n";
  if (!g.error.empty()) {
    wrap(out, "error: " + g.error, 2, o.width);
    return;
  }
  out << "\n  " << pad("testcase", kKeyCol) << lpad("measured", kValueCol) << lpad("reference", kValueCol)
      << lpad("%", kPctCol) << "  verdict\n";
  for (const auto& m : g.results) render_result(out, m, o);
  render_ridge_points(out, g);
}

}  // namespace

std::string format_measured(double v, const std::string& unit) {
  const double a = std::fabs(v);
  std::string num;
  if (a >= 100 || a == 0) num = fmt::format("{:.0f}", v);
  else if (a >= 10) num = fmt::format("{:.1f}", v);
  else if (a >= 1) num = fmt::format("{:.2f}", v);
  else if (a >= 0.01) num = fmt::format("{:.3f}", v);
  else num = fmt::format("{:.3g}", v);
  return unit.empty() ? num : num + " " + unit;
}

std::string render_bench_text(const machine::Profile& p, const RenderOptions& o) {
  std::ostringstream out;
  out << fmt::format("chokepoint bench: {} run, {:.1f} s; CUDA driver {}, runtime {}, cuBLASLt {}\n",
                     p.mode.empty() ? "full" : safe(p.mode), p.seconds, version_text(p.cuda_driver),
                     version_text(p.cuda_runtime), cublaslt_text(p.cublaslt));
  if (p.cublaslt <= 0 && !p.cublaslt_note.empty()) wrap(out, "cuBLASLt: " + p.cublaslt_note, 2, o.width);
  if (!p.error.empty()) {
    out << "error: " << safe(p.error) << "\n";
    return out.str();
  }
  for (const auto& g : p.gpus) render_gpu(out, g, o);
  const machine::VerdictCounts c = machine::count_verdicts(p);
  out << fmt::format("\n{} ok, {} below par, {} above published, {} info, {} waived, {} failed\n", c.ok, c.below_par,
                     c.above, c.info, c.waived, c.failed);
  return out.str();
}

std::string render_bench(const machine::Profile& p, Format format, const RenderOptions& o) {
  return format == Format::kJson ? machine::profile_to_json(p) : render_bench_text(p, o);
}

}  // namespace chokepoint::report
