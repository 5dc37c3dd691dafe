#include "analyses/roofline.h"

#include <algorithm>
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
  return rs;
}

}  // namespace chokepoint::analyses
