// memory-bound-matmul: GEMMs below the ridge point of their precision take much of the
// step: skinny matrix products (decoding one token, batch-1 inference, small batches)
// stream their weights from HBM and do a few FLOPs per byte, so memory bandwidth, not the
// tensor cores, sets their speed (a decode GEMV reads as compute in a naive breakdown).
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Memory-bound matrix time worth a change: a fifth of the step, the memory-bound-elementwise bar.
constexpr double kMinSharePct = 20.0;
}  // namespace

std::optional<Finding> memory_bound_matmul(const TraceEvidence& c) {
  const auto& rl = c.a.roofline;
  const double share = c.a.pct(rl.matrix_memory_bound_ns);
  if (share < kMinSharePct) return std::nullopt;
  double bytes = 0, ns = 0, flops = 0;
  for (const auto& row : rl.rows) {
    if (!row.memory_bound) continue;
    bytes += row.bytes;
    ns += static_cast<double>(row.gpu_ns);
    flops += row.flops;
  }
  const auto& hbm = c.a.ceilings.hbm_gbps;
  Finding f = new_finding(share, std::nullopt);
  f.remedies = {"bigger-batch"};
  f.title = fmt::format("{:.0f}% of the step runs matrix products below the roofline's ridge point (memory-bound)",
                        share);
  f.detail = fmt::format(
      "{:.2f} ms per step of GEMM/GEMV kernels do too few FLOPs per byte for the tensor cores to matter: they "
      "stream their operands (mostly weights) from HBM.",
      c.a.ms_per_step(rl.matrix_memory_bound_ns));
  f.evidence = {evidence("memory_bound_matmul_pct", share, "%", kMinSharePct),
                evidence("memory_bound_matmul_ms_per_step", c.a.ms_per_step(rl.matrix_memory_bound_ns), "ms")};
  if (ns > 0 && bytes > 0) {
    const double gbps = bytes / ns;
    f.detail += fmt::format(" Where shapes were recorded they reach {:.0f} GB/s{} at {:.1f} FLOP/byte.", gbps,
                            hbm ? fmt::format(" ({:.0f}% of the {:.0f} GB/s HBM ceiling)", 100 * gbps / *hbm, *hbm)
                                : " (" + machine::missing_ceiling(c.a.ceilings, "memory bandwidth") + ")",
                            flops / bytes);
    f.evidence.push_back(evidence_vs_ceiling("achieved_gbps", gbps, "GB/s", hbm));
    f.evidence.push_back(evidence("flop_per_byte", flops / bytes, "FLOP/B"));
  }
  f.recommendation =
      "Give each weight read more work: batch more sequences or requests per step (continuous batching for "
      "serving), or read fewer bytes per weight (fp8/int8 weight quantization).";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain memory-bound-matmul` prints.
extern const Rule memory_bound_matmul_rule = {
    .id = "memory-bound-matmul",
    .category = Category::kMemory,
    .trace = memory_bound_matmul,
    .meaning =
        "Matrix products below the ridge point of their precision (skinny GEMMs: decoding, "
        "batch-1 inference, small batches) stream their weights from HBM: memory bandwidth, not "
        "the tensor cores, sets their speed.",
    .detection =
        "From a trace with shapes: GEMM FLOPs per byte under the GPU's ridge point, a fifth of "
        "the step or more.",
    .action =
        "Batch more rows per product (bigger batch, batched requests), lower-precision weights. "
        "Remedy bigger-batch.",
};

}  // namespace chokepoint::rules
