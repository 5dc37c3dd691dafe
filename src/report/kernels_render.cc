#include "report/kernels_render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "base/terminal_text.h"
#include "report/format_util.h"
#include "report/formats.h"
#include "report/kernel_name.h"
#include "report/text_layout.h"

namespace chokepoint::report {

using analyses::Bound;
using analyses::KernelPoint;
using analyses::KernelsView;

namespace {

std::string opt_number(const std::optional<double>& v, std::string_view unit) {
  return v ? format_value(*v, unit) : std::string("-");
}

std::string launches(int64_t n) { return fmt::format("{} launch{}", n, n == 1 ? "" : "es"); }

// "bf16 H200 SXM: bf16 989 TFLOP/s, HBM 4800 GB/s (published:H200 SXM)".
std::string ceilings_line(const KernelsView& v) {
  const auto& c = v.ceilings;
  std::string s = c.gpu.empty() ? (c.device.empty() ? "unknown GPU" : c.device) : c.gpu;
  std::vector<std::string> parts;
  if (c.bf16_tflops) parts.push_back("bf16 " + format_value(*c.bf16_tflops, "TFLOP/s"));
  if (c.tf32_tflops) parts.push_back("tf32 " + format_value(*c.tf32_tflops, "TFLOP/s"));
  if (c.fp32_tflops) parts.push_back("fp32 " + format_value(*c.fp32_tflops, "TFLOP/s"));
  if (c.hbm_gbps) parts.push_back("HBM " + format_value(*c.hbm_gbps, "GB/s"));
  if (!parts.empty()) s += ": ";
  for (size_t i = 0; i < parts.size(); ++i) s += (i > 0 ? ", " : "") + parts[i];
  return s + " (" + c.source + ")";
}

// "bf16 908 TFLOP/s (92% of 989)", "DRAM 3620 GB/s (85% of 4252)".
std::string compute_text(const KernelPoint& k) {
  if (!k.tflops) return "";
  std::string s = fmt::format("{} {}",
                              k.precision == analyses::Precision::kUnknown ? "" : analyses::precision_name(k.precision),
                              format_value(*k.tflops, k.precision == analyses::Precision::kInt8 ? "TOP/s" : "TFLOP/s"));
  if (k.compute_pct && k.peak_tflops) {
    s += fmt::format(" ({} of {})", format_pct(*k.compute_pct), format_number(*k.peak_tflops));
  }
  return s;
}

std::string memory_text(const KernelPoint& k) {
  if (!k.dram_gbps) return "";
  std::string s = "DRAM " + format_value(*k.dram_gbps, "GB/s");
  if (k.memory_pct && k.hbm_gbps)
    s += fmt::format(" ({} of {})", format_pct(*k.memory_pct), format_number(*k.hbm_gbps));
  return s;
}

std::string counters_text(const KernelPoint& k) {
  std::vector<std::string> parts;
  if (k.sm_pct) parts.push_back("SM " + format_pct(*k.sm_pct));
  if (k.tensor_pipe_pct) parts.push_back("tensor pipe " + format_pct(*k.tensor_pipe_pct));
  if (k.occupancy_pct) {
    std::string o = "occupancy " + format_pct(*k.occupancy_pct);
    if (k.theoretical_occupancy_pct) o += " of " + format_pct(*k.theoretical_occupancy_pct) + " possible";
    parts.push_back(o);
  }
  if (k.sm_clock_mhz) parts.push_back(fmt::format("SM clock {:.0f} MHz", *k.sm_clock_mhz));
  if (k.grid_blocks > 0) {
    std::string g = fmt::format("grid {} blocks", k.grid_blocks);
    if (k.block_threads > 0) g += fmt::format(" x {} threads", k.block_threads);
    parts.push_back(g);
  }
  if (k.registers > 0) parts.push_back(fmt::format("{} registers", k.registers));
  if (k.shared_mem_bytes && *k.shared_mem_bytes > 0)
    parts.push_back(format_value(*k.shared_mem_bytes / 1e3, "KB") + " shared");
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i > 0 ? ", " : "") + parts[i];
  return s;
}

std::string bench_text(const KernelPoint& k) {
  if (!k.bench_value || !k.pct_of_bench) return "";
  const bool mem = k.bound == Bound::kMemory;
  std::string s = fmt::format("{} of the {} ceiling ({})", format_pct(*k.pct_of_bench), k.bench_figure,
                              format_value(*k.bench_value, mem ? "GB/s" : "TFLOP/s"));
  if (k.pct_of_bench_at_clock && k.bench_mhz && k.sm_clock_mhz) {
    s += fmt::format("; {} at bench's {:.0f} MHz (it ran at {:.0f})", format_pct(*k.pct_of_bench_at_clock),
                     *k.bench_mhz, *k.sm_clock_mhz);
  }
  return s;
}

std::string bench_cell(const KernelPoint& k) {
  if (!k.pct_of_bench) return "-";
  std::string s = format_pct(*k.pct_of_bench) + " of " + k.bench_figure;
  if (k.pct_of_bench_at_clock) s += fmt::format(" ({} at its clock)", format_pct(*k.pct_of_bench_at_clock));
  return s;
}

Tone bound_tone(Bound b) {
  switch (b) {
    case Bound::kMemory: return Tone::kYellow;
    case Bound::kCompute: return Tone::kGreen;
    case Bound::kLatency: return Tone::kRed;
    case Bound::kUnknown: break;
  }
  return Tone::kDim;
}

// `v` with every string that came from the input (kernel and device names, ncu's notes, the
// paths) made safe for a terminal and Markdown: a kernel named "\x1b]0;...\x07" must not
// retitle the user's terminal.
KernelsView terminal_safe(const KernelsView& v) {
  KernelsView s = v;
  for (auto& i : s.inputs) i = escape_controls(i);
  for (auto& n : s.notes) n = escape_controls(n);
  for (std::string* f : {&s.ceilings.gpu, &s.ceilings.device, &s.ceilings.note, &s.ceilings.source})
    *f = escape_controls(*f);
  for (auto& k : s.kernels) {
    for (std::string* f : {&k.name, &k.bench_figure, &k.limiter, &k.why, &k.advice}) *f = escape_controls(*f);
  }
  return s;
}

void put_wrapped(std::ostringstream& out, const std::string& label, const std::string& text, int width) {
  const std::string indent(5, ' ');
  const size_t w = static_cast<size_t>(std::max(40, width)) - indent.size();
  const auto lines = wrap(label + text, w, w);
  for (const auto& l : lines) out << indent << l << '\n';
}

}  // namespace

std::string render_kernels_text(const KernelsView& view, const RenderOptions& o) {
  const KernelsView v = terminal_safe(view);
  const Style st(o);
  std::ostringstream out;
  out << st(Tone::kBold, v.measured ? "Kernels measured by Nsight Compute" : "Kernels of the trace (estimated)")
      << '\n';
  out << "Ceilings: " << ceilings_line(v) << '\n';
  if (v.kernel_ns > 0) {
    out << fmt::format("Kernel time {} over {} distinct kernels; the top {}:\n", format_ms(v.kernel_ns / 1e6),
                       v.kernels_total, v.kernels.size());
  }
  std::vector<std::string> names;
  for (const auto& k : v.kernels) names.push_back(k.name);
  const size_t name_w = static_cast<size_t>(std::max(30, o.width - 40));
  const auto shown = distinct_kernel_names(names, name_w);
  for (size_t i = 0; i < v.kernels.size(); ++i) {
    const KernelPoint& k = v.kernels[i];
    std::string time = format_ms(k.ns / 1e6) + ", " + launches(k.calls);
    if (k.time_pct >= 0) time += ", " + format_pct(k.time_pct) + " of kernel time";
    out << '\n'
        << fmt::format("{:>2}. {}  {}  ", i + 1, st(Tone::kBold, shown[i]), time)
        << st(bound_tone(k.bound), analyses::bound_name(k.bound)) << (k.limiter.empty() ? "" : " (" + k.limiter + ")")
        << '\n';
    std::string figures = compute_text(k);
    const std::string mem = memory_text(k);
    if (!mem.empty()) figures += (figures.empty() ? "" : ", ") + mem;
    if (k.intensity) {
      figures += fmt::format(", {} FLOP/byte", format_number(*k.intensity));
      if (k.ridge) figures += fmt::format(" (ridge {})", format_number(*k.ridge));
    }
    if (!figures.empty()) put_wrapped(out, "", figures, o.width);
    if (const std::string c = counters_text(k); !c.empty()) put_wrapped(out, "", c, o.width);
    if (const std::string b = bench_text(k); !b.empty()) put_wrapped(out, "", b, o.width);
    put_wrapped(out, "why: ", k.why, o.width);
    put_wrapped(out, "advice: ", k.advice, o.width);
  }
  if (!v.notes.empty()) out << '\n';
  for (const auto& n : v.notes) put_wrapped(out, "note: ", n, o.width);
  return out.str();
}

std::string render_kernels_markdown(const KernelsView& view) {
  const KernelsView v = terminal_safe(view);
  std::ostringstream out;
  out << (v.measured ? "# Kernels measured by Nsight Compute\n\n" : "# Kernels of the trace (estimated)\n\n");
  out << "Ceilings: " << ceilings_line(v) << "\n\n";
  out << "| # | kernel | time | bound | achieved | DRAM | occupancy | vs bench |\n";
  out << "|---:|---|---:|---|---:|---:|---:|---:|\n";
  std::vector<std::string> names;
  for (const auto& k : v.kernels) names.push_back(k.name);
  const auto shown = distinct_kernel_names(names, 60);
  for (size_t i = 0; i < v.kernels.size(); ++i) {
    const KernelPoint& k = v.kernels[i];
    std::string name = shown[i];
    for (char& c : name) {
      if (c == '|') c = '/';
    }
    out << fmt::format("| {} | `{}` | {} | {}{} | {} | {} | {} | {} |\n", i + 1, name, format_ms(k.ns / 1e6),
                       analyses::bound_name(k.bound), k.limiter.empty() ? "" : " (" + k.limiter + ")",
                       compute_text(k).empty() ? "-" : compute_text(k), opt_number(k.dram_gbps, "GB/s"),
                       opt_number(k.occupancy_pct, "%"), bench_cell(k));
  }
  out << '\n';
  for (size_t i = 0; i < v.kernels.size(); ++i) {
    out << fmt::format("{}. **{}**: {}. {}\n", i + 1, analyses::bound_name(v.kernels[i].bound), v.kernels[i].why,
                       v.kernels[i].advice);
  }
  for (const auto& n : v.notes) out << "\n> " << n << '\n';
  return out.str();
}

namespace {

void put(nlohmann::ordered_json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = round_significant(*v);
}

}  // namespace

std::string render_kernels_json(const KernelsView& v) {
  nlohmann::ordered_json j;
  j["schema"] = kKernelsSchema;
  j["inputs"] = v.inputs;
  j["measured"] = v.measured;
  auto& c = j["ceilings"];
  c["gpu"] = v.ceilings.gpu;
  c["source"] = v.ceilings.source;
  put(c, "hbm_gbps", v.ceilings.hbm_gbps);
  put(c, "bf16_tflops", v.ceilings.bf16_tflops);
  put(c, "tf32_tflops", v.ceilings.tf32_tflops);
  put(c, "fp32_tflops", v.ceilings.fp32_tflops);
  put(c, "fp8_tflops", v.ceilings.fp8_tflops);
  put(c, "bf16_gemm_tflops", v.ceilings.bf16_gemm_tflops);
  j["kernel_ns"] = round_significant(v.kernel_ns);
  j["kernels_total"] = v.kernels_total;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const KernelPoint& k : v.kernels) {
    nlohmann::ordered_json e;
    e["name"] = k.name;
    e["class"] = analyses::kernel_class_name(k.kclass);
    e["precision"] = analyses::precision_name(k.precision);
    e["bound"] = analyses::bound_name(k.bound);
    e["limiter"] = k.limiter;
    e["measured"] = k.measured;
    e["calls"] = k.calls;
    e["ns"] = round_significant(k.ns);
    if (k.time_pct >= 0) e["time_pct"] = round_significant(k.time_pct);
    put(e, "flops", k.flops);
    put(e, "dram_bytes", k.dram_bytes);
    put(e, "l2_bytes", k.l2_bytes);
    put(e, "tflops", k.tflops);
    put(e, "dram_gbps", k.dram_gbps);
    put(e, "intensity", k.intensity);
    put(e, "peak_tflops", k.peak_tflops);
    put(e, "hbm_gbps", k.hbm_gbps);
    put(e, "ridge", k.ridge);
    put(e, "compute_pct", k.compute_pct);
    put(e, "memory_pct", k.memory_pct);
    put(e, "sm_pct", k.sm_pct);
    put(e, "tensor_pipe_pct", k.tensor_pipe_pct);
    put(e, "occupancy_pct", k.occupancy_pct);
    put(e, "theoretical_occupancy_pct", k.theoretical_occupancy_pct);
    if (k.grid_blocks > 0) e["grid_blocks"] = k.grid_blocks;
    if (k.block_threads > 0) e["block_threads"] = k.block_threads;
    if (k.registers > 0) e["registers"] = k.registers;
    put(e, "shared_mem_bytes", k.shared_mem_bytes);
    put(e, "sm_clock_mhz", k.sm_clock_mhz);
    if (k.bench_value) {
      e["bench"]["figure"] = k.bench_figure;
      put(e["bench"], "value", k.bench_value);
      put(e["bench"], "pct", k.pct_of_bench);
      put(e["bench"], "mhz", k.bench_mhz);
      put(e["bench"], "pct_at_bench_clock", k.pct_of_bench_at_clock);
    }
    e["why"] = k.why;
    e["advice"] = k.advice;
    j["kernels"].push_back(std::move(e));
  }
  j["notes"] = v.notes;
  // Kernel names come from the input: bytes that are not UTF-8 become U+FFFD, not an exception.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Status render_kernels(const KernelsView& v, std::string_view format, const RenderOptions& o, std::ostream& out) {
  auto f = parse_format(format, kKernelsFormats);
  if (!f.ok()) return f.status();
  switch (f.value()) {
    case Format::kText: out << render_kernels_text(v, o); break;
    case Format::kMarkdown: out << render_kernels_markdown(v); break;
    case Format::kJson: out << render_kernels_json(v); break;
    case Format::kHtml: break;  // not offered: parse_format refused it
  }
  return Status::Ok();
}

}  // namespace chokepoint::report
