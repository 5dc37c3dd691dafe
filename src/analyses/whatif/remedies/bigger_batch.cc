// bigger-batch: 4x the samples per step (with the learning rate scaled), compared by
// samples per second.
//
// Replay: the host issues the same calls (the same ops, whatever the batch); each kernel
// outside the optimizer does 4x the work. A GEMM with recorded shapes is placed on the
// roofline before and after (its weight operand does not grow): a decode GEMV that only
// streams its weights takes the same time for 4 rows. Other kernels grow with their work
// above a latency floor; copies grow 4x. The optimizer step is unchanged.
#include <fmt/format.h>

#include "analyses/op_shapes.h"
#include "analyses/roofline.h"
#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace {
constexpr double kFactor = 4.0;

// Roofline time of a GEMM at a given row count, in arbitrary units.
double roofline(const GemmShape& s, double rows_scale, double peak_tflops, double hbm_gbps, double eb) {
  const double m = s.m * rows_scale;
  const double flops = 2 * s.batch * m * s.n * s.k;
  const double bytes = eb * s.batch * (m * s.k + s.k * s.n + m * s.n);
  return std::max(flops / (peak_tflops * 1e3), bytes / hbm_gbps);
}

std::optional<double> peak_for(const machine::Ceilings& c, const NodeInfo& n) {
  switch (n.precision) {
    case Precision::kBf16:
    case Precision::kFp16: return c.bf16_gemm_tflops;
    case Precision::kTf32: return c.tf32_gemm_tflops;
    case Precision::kFp32: return n.tensor_cores == TensorCores::kYes ? c.tf32_gemm_tflops : c.fp32_gemm_tflops;
    case Precision::kFp8: return c.fp8_gemm_tflops;
    default: return std::nullopt;
  }
}
}  // namespace

std::optional<Estimate> estimate_bigger_batch(const Context& c) {
  using namespace remedy;
  const auto& g = c.g;
  if (g.gpu.empty()) return std::nullopt;
  Plan p = c.plain;
  p.samples_factor = kFactor;
  int64_t on_roofline = 0;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const NodeInfo& n = c.nodes[k];
    const TimeNs t = g.gpu[k].dur;
    if (n.in_optimizer) continue;
    if (!n.kernel) {
      p.node_dur[k] = ns(static_cast<double>(t) * kFactor);
      continue;
    }
    if (n.kclass == KernelClass::kGemm && c.ceilings.hbm_gbps) {
      const auto sh = gemm_shape(c.tl, c.ix.op_row[g.gpu[k].row]);
      const auto peak = peak_for(c.ceilings, n);
      const double eb = element_bytes(n.precision);
      if (sh && peak && eb > 0) {
        const double r = roofline(*sh, kFactor, *peak, *c.ceilings.hbm_gbps, eb) /
                         roofline(*sh, 1.0, *peak, *c.ceilings.hbm_gbps, eb);
        p.node_dur[k] = std::max(t, ns(static_cast<double>(t) * r));
        ++on_roofline;
        continue;
      }
    }
    // A GEMV or skinny-tile GEMM (no recorded shapes) streams its weights: 4x the rows
    // still fit its tile and ride along.
    if (n.kclass == KernelClass::kGemm && is_gemv_kernel(c.tl.strings.view(c.tl.gpu_ops.name[g.gpu[k].row]))) {
      continue;
    }
    const TimeNs fixed = std::min(t, kLatencyBoundNs);
    p.node_dur[k] = fixed + ns(static_cast<double>(t - fixed) * kFactor);
  }
  return finish(c, Remedy::kBiggerBatch, p,
                fmt::format("4x the samples per step: the host issues the same calls, kernels do 4x the work "
                            "({} GEMMs per step placed on the roofline by their shapes)",
                            per_step_count(c, on_roofline)),
                {"The larger batch fits in GPU memory (activations grow 4x).",
                 "The gain is in samples per second; convergence per sample may change (scale the learning rate, "
                 "or keep the global batch with fewer accumulation steps).",
                 "Kernels above a 3 us latency floor grow in proportion to their work."});
}

}  // namespace chokepoint::analyses::whatif
