#include "analyses/roofline.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyses/kernels.h"

namespace chokepoint::analyses {

using timeline::GpuOpKind;
using timeline::Timeline;

namespace {

double element_bytes(Precision p) {
  switch (p) {
    case Precision::kFp64: return 8;
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
    case Precision::kUnknown: return 0;
  }
  return 0;
}

struct Dims {
  const timeline::OpInputs& oi;
  uint32_t op;
  uint32_t rank(uint32_t j) const { return j < oi.num_inputs(op) ? oi.rank(op, j) : 0; }
  int64_t d(uint32_t j, uint32_t k) const { return oi.dim(op, j, k); }
  std::string text(uint32_t j) const {
    std::string s = "[";
    for (uint32_t k = 0; k < rank(j); ++k) s += (k ? "," : "") + std::to_string(d(j, k));
    return s + "]";
  }
};

// M, N, K and batch of a GEMM-like op; false when the op or its dims are not understood.
bool gemm_dims(std::string_view name, const Dims& x, double* batch, double* m, double* n, double* k,
               std::string* shape) {
  uint32_t a = 0, b = 1;  // inputs holding the two matrices
  if (name == "aten::addmm" || name == "aten::baddbmm") a = 1, b = 2;
  if (name == "aten::mm" || name == "aten::addmm" || name == "aten::_scaled_mm") {
    if (x.rank(a) != 2 || x.rank(b) != 2) return false;
    *batch = 1, *m = x.d(a, 0), *k = x.d(a, 1), *n = x.d(b, 1);
  } else if (name == "aten::bmm" || name == "aten::baddbmm") {
    if (x.rank(a) != 3 || x.rank(b) != 3) return false;
    *batch = x.d(a, 0), *m = x.d(a, 1), *k = x.d(a, 2), *n = x.d(b, 2);
  } else if (name == "aten::linear") {  // x[..., K] . W[N, K]^T
    if (x.rank(a) < 1 || x.rank(b) != 2) return false;
    double rows = 1;
    for (uint32_t i = 0; i + 1 < x.rank(a); ++i) rows *= static_cast<double>(x.d(a, i));
    *batch = 1, *m = rows, *k = x.d(a, x.rank(a) - 1), *n = x.d(b, 0);
  } else {
    return false;
  }
  *shape = x.text(a) + "x" + x.text(b);
  return *m > 0 && *n > 0 && *k > 0 && *batch > 0;
}

}  // namespace

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

RooflineStats compute_roofline(const Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                               const machine::Ceilings& c) {
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
    Dims x{tl.op_inputs, cpu.inputs[row]};
    double batch, m, n, k;
    std::string shape;
    if (!gemm_dims(name, x, &batch, &m, &n, &k, &shape)) continue;
    const double eb = element_bytes(w.precision);
    RooflineRow& r = rows[{std::string(name), shape, w.precision}];
    r.op = name;
    r.shape = shape;
    r.precision = w.precision;
    ++r.calls;
    r.flops += 2 * batch * m * n * k;
    r.bytes += eb * batch * (m * k + k * n + m * n);
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
  return rs;
}

}  // namespace chokepoint::analyses
