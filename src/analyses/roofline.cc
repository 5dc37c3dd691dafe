#include "analyses/roofline.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyses/kernels.h"
#include "analyses/op_shapes.h"

namespace chokepoint::analyses {

using timeline::GpuOpKind;
using timeline::Timeline;

std::optional<double> peak_tflops(const machine::Ceilings& c, Precision p) {
  switch (p) {
    case Precision::kFp32: return c.fp32_tflops;
    case Precision::kTf32: return c.tf32_tflops;
    case Precision::kFp16:
    case Precision::kBf16: return c.bf16_tflops;
    case Precision::kFp8: return c.fp8_tflops;
    default: return std::nullopt;
  }
}

bool is_gemv_kernel(std::string_view n) {
  if (n.find("gemv") != std::string_view::npos || n.find("Gemv") != std::string_view::npos ||
      n.find("GEMV") != std::string_view::npos) {
    return true;
  }
  // The CTA tile: the first "AxB" after the kernel family's prefix.
  size_t from = std::string_view::npos;
  for (std::string_view key : {"tilesize", "nvjet_", "gemm_", "sgemm_", "fprop_", "dgrad_", "wgrad_"}) {
    const size_t k = n.find(key);
    if (k != std::string_view::npos) from = std::min(from, k + key.size());
  }
  if (from == std::string_view::npos) return false;
  for (size_t i = from; i < n.size(); ++i) {
    if (n[i] != 'x' || i == 0 || !std::isdigit(static_cast<unsigned char>(n[i - 1])) || i + 1 >= n.size() ||
        !std::isdigit(static_cast<unsigned char>(n[i + 1]))) {
      continue;
    }
    size_t a = i;
    while (a > 0 && std::isdigit(static_cast<unsigned char>(n[a - 1]))) --a;
    size_t b = i + 1;
    while (b < n.size() && std::isdigit(static_cast<unsigned char>(n[b]))) ++b;
    if (i - a > 4 || b - i - 1 > 4) return false;  // not a tile
    const int x = std::stoi(std::string(n.substr(a, i - a)));
    const int y = std::stoi(std::string(n.substr(i + 1, b - i - 1)));
    return std::min(x, y) <= 16;
  }
  return false;
}

namespace {

bool is_matrix_class(KernelClass k) {
  return k == KernelClass::kGemm || k == KernelClass::kConv || k == KernelClass::kAttention;
}

// Matrix time and FLOPs per precision, for MFU.
struct MatrixTotals {
  std::array<TimeNs, 8> ns{};
  std::array<double, 8> flops{};
};

// One GEMM/conv/attention kernel: its work from the GEMM's recorded shapes, memory-bound
// when below the ridge point of its precision (or, without shapes, a GEMV by its tile).
void add_matrix_kernel(const Timeline& tl, const TimelineIndex& ix, size_t i, const machine::Ceilings& c,
                       ClassRoofline& r, MatrixTotals& m, RooflineStats& rs) {
  const auto& g = tl.gpu_ops;
  const TimeNs dur = g.end[i] - g.start[i];
  Precision p;
  TensorCores tc;
  kernel_precision(tl, ix, i, &p, &tc);
  m.ns[static_cast<int>(p)] += dur;
  const auto sh = r.kclass == KernelClass::kGemm ? gemm_shape(tl, ix.op_row[i]) : std::nullopt;
  const double eb = element_bytes(p == Precision::kTf32 ? Precision::kFp32 : p);
  bool memory = is_gemv_kernel(tl.strings.view(g.name[i]));
  if (sh && eb > 0) {
    const double flops = sh->flops(), bytes = sh->bytes(eb);
    r.flops += flops;
    r.ns_with_flops += dur;
    r.bytes += bytes;
    r.ns_with_bytes += dur;
    m.flops[static_cast<int>(p)] += flops;
    const auto peak = peak_tflops(c, p);
    if (peak && c.hbm_gbps) memory = flops / bytes < *peak * 1e3 / *c.hbm_gbps;  // below the ridge point
  }
  if (memory) {
    r.memory_bound_ns += dur;
    rs.matrix_memory_bound_ns += dur;
  }
}

// Any other kernel: the bytes of its op when shapes were recorded; memory-bound unless
// it is communication or unclassified.
void add_other_kernel(const Timeline& tl, const TimelineIndex& ix, size_t i, ClassRoofline& r) {
  const TimeNs dur = tl.gpu_ops.end[i] - tl.gpu_ops.start[i];
  const double bytes = ix.op_bytes[i];
  if (bytes > 0) {
    r.bytes += bytes;
    r.ns_with_bytes += dur;
  }
  if (r.kclass != KernelClass::kCommunication && r.kclass != KernelClass::kOther) r.memory_bound_ns += dur;
}

// MFU in the precision most matrix time ran in.
void set_mfu(const MatrixTotals& m, const machine::Ceilings& c, TimeNs analyzed_ns, RooflineStats& rs) {
  size_t top = 0;
  for (size_t p = 1; p < m.ns.size(); ++p) {
    if (m.ns[p] > m.ns[top]) top = p;
  }
  double flops = 0;
  for (double f : m.flops) flops += f;
  const auto peak = peak_tflops(c, static_cast<Precision>(top));
  if (m.ns[top] > 0 && flops > 0 && peak && analyzed_ns > 0) {
    rs.mfu_precision = static_cast<Precision>(top);
    rs.mfu_pct = 100.0 * flops / static_cast<double>(analyzed_ns) / 1e3 / *peak;
  }
}

// Per-class time, known work and memory-bound share; MFU.
void classify(const Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm, const machine::Ceilings& c,
              TimeNs analyzed_ns, RooflineStats& rs) {
  const auto& g = tl.gpu_ops;
  std::array<ClassRoofline, kNumKernelClasses> cls{};
  MatrixTotals matrix;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] != GpuOpKind::kKernel || wm.gpu_op[i] < 0) continue;
    const KernelClass k = ix.kclass[i];
    ClassRoofline& r = cls[static_cast<int>(k)];
    r.kclass = k;
    ++r.kernels;
    r.ns += g.end[i] - g.start[i];
    if (is_matrix_class(k)) {
      add_matrix_kernel(tl, ix, i, c, r, matrix, rs);
    } else {
      add_other_kernel(tl, ix, i, r);
    }
  }
  for (const auto& r : cls) {
    if (r.ns > 0) rs.classes.push_back(r);
  }
  std::sort(rs.classes.begin(), rs.classes.end(),
            [](const ClassRoofline& a, const ClassRoofline& b) { return a.ns > b.ns; });
  set_mfu(matrix, c, analyzed_ns, rs);
}

}  // namespace

RooflineStats compute_roofline(const Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                               const machine::Ceilings& c, TimeNs analyzed_ns) {
  RooflineStats rs;
  const auto& g = tl.gpu_ops;
  const auto& cpu = tl.cpu_ranges;
  // GPU time and precision of each ATen op that launched matrix kernels.
  struct OpWork {
    TimeNs ns = 0;
    Precision precision = Precision::kUnknown;
    bool matrix = false;
  };
  std::unordered_map<int32_t, OpWork> work;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] != GpuOpKind::kKernel || wm.gpu_op[i] < 0 || ix.op_row[i] < 0) continue;
    OpWork& w = work[ix.op_row[i]];
    w.ns += g.end[i] - g.start[i];
    if (ix.kclass[i] == KernelClass::kGemm && !w.matrix) {
      w.matrix = true;
      TensorCores tc;
      kernel_precision(tl, ix, i, &w.precision, &tc);
    }
  }
  std::map<std::tuple<std::string, std::string, Precision>, RooflineRow> rows;
  for (const auto& [row, w] : work) {
    if (!w.matrix || cpu.inputs[row] == timeline::CpuRanges::kNoInputs) continue;
    const std::string_view name = tl.strings.view(cpu.name[row]);
    const std::optional<GemmShape> sh = gemm_shape(tl, row);
    if (!sh) continue;
    const double eb = element_bytes(w.precision);
    RooflineRow& r = rows[{std::string(name), sh->text, w.precision}];
    r.op = name;
    r.shape = sh->text;
    r.precision = w.precision;
    ++r.calls;
    r.flops += sh->flops();
    r.bytes += sh->bytes(eb);
    r.gpu_ns += w.ns;
  }
  for (auto& [key, r] : rows) {
    r.achieved_tflops = r.gpu_ns > 0 ? r.flops / static_cast<double>(r.gpu_ns) / 1e3 : 0;
    r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
    r.peak_tflops = peak_tflops(c, r.precision);
    if (r.peak_tflops && c.hbm_gbps && r.intensity > 0) {
      const double mem_roof = r.intensity * *c.hbm_gbps / 1e3;  // TFLOP/s
      r.attainable_tflops = std::min(*r.peak_tflops, mem_roof);
      r.memory_bound = mem_roof < *r.peak_tflops;
    }
    rs.flops += r.flops;
    rs.gpu_ns += r.gpu_ns;
    rs.rows.push_back(r);
  }
  std::sort(rs.rows.begin(), rs.rows.end(),
            [](const RooflineRow& a, const RooflineRow& b) { return a.gpu_ns > b.gpu_ns; });
  classify(tl, ix, wm, c, analyzed_ns, rs);
  return rs;
}

}  // namespace chokepoint::analyses
