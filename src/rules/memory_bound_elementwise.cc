// memory-bound-elementwise: unfused elementwise / normalization / reduction kernels take
// a large share of the step; each one reads and writes its tensors through HBM, so
// fusing a chain of them into one kernel removes most of that traffic.
#include <fmt/format.h>

#include "base/plural.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Fusible kernel time worth a torch.compile (a fifth of the step: the TensorBoard
// plugin and HTA report kernel-type shares; fusion pays when such kernels dominate).
constexpr double kMinSharePct = 20.0;
}  // namespace

std::optional<Finding> memory_bound_elementwise(const TraceEvidence& c) {
  const auto& fu = c.a.fusion;
  const double share = c.a.pct(fu.fusible_ns);
  if (share < kMinSharePct || fu.chains == 0) return std::nullopt;
  const auto& t = c.a.total();
  const TimeNs saved = fu.chain_ns - fu.chain_fused_ns;
  const double speedup = analyses::projected_speedup(t.duration, saved, t.host_critical);
  const auto& hbm = c.a.ceilings.hbm_gbps;
  const double per_step = c.a.per_step(fu.fusible_kernels);

  Finding f = new_finding(share, speedup);
  f.remedies = {"torch-compile"};
  f.title = fmt::format("Unfused elementwise/normalization kernels take {:.0f}% of the step ({:.0f} per step)", share,
                        per_step);
  std::string bw;
  if (fu.achieved_gbps) {
    bw = fmt::format(
        " They move data at {:.0f} GB/s{}: memory bandwidth, not arithmetic, sets their speed.", *fu.achieved_gbps,
        hbm ? fmt::format(" ({:.0f}% of the {:.0f} GB/s HBM ceiling)", 100 * *fu.achieved_gbps / *hbm, *hbm)
            : " (" + machine::missing_ceiling(c.a.ceilings, "memory bandwidth") + ")");
  }
  // The chains torch-compile's replay fused where it ran (its estimate is this finding's):
  // one count, one time, in the finding and the remedy alike; the analysis' own count
  // (analyses/fusion.h) where there is no replay.
  analyses::whatif::Estimate::FusedChains ch{c.a.per_step(fu.chains), c.a.per_step(fu.chain_kernels),
                                             c.a.ms_per_step(fu.chain_ns), c.a.ms_per_step(fu.chain_fused_ns)};
  if (const auto* e = analyses::estimate_of(c.a, analyses::whatif::Remedy::kCompileFusion); e && e->fused_chains)
    ch = *e->fused_chains;
  f.detail = fmt::format(
      "{} per step of back-to-back fusible kernels ({}, {:.2f} ms per step) "
      "each re-read and re-write their tensors; fused, each chain would cost about its longest "
      "kernel ({:.2f} ms per step in all).{}",
      counted(ch.chains, "chain", "chains"), counted(ch.kernels, "kernel", "kernels"), ch.before_ms, ch.after_ms, bw);
  f.evidence = {evidence("fusible_kernel_pct", share, "%", kMinSharePct),
                evidence("chained_ms_per_step", ch.before_ms, "ms"),
                evidence("fused_estimate_ms_per_step", ch.after_ms, "ms")};
  if (fu.achieved_gbps) {
    f.evidence.push_back(evidence_vs_ceiling("achieved_gbps", *fu.achieved_gbps, "GB/s", hbm));
  }
  f.recommendation =
      "Fuse the elementwise chains: torch.compile(model) (or torch.compile on the hot function) "
      "generates one kernel per chain; use fused building blocks (F.scaled_dot_product_attention, "
      "fused LayerNorm/RMSNorm, AdamW(fused=True)); keep activations in bf16 to halve the bytes.";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain memory-bound-elementwise` prints.
extern const Rule memory_bound_elementwise_rule = {
    .id = "memory-bound-elementwise",
    .category = Category::kMemory,
    .trace = memory_bound_elementwise,
    .meaning =
        "Unfused elementwise, normalization and reduction kernels take a large share of the step; "
        "each reads and writes its tensors through HBM.",
    .detection =
        "From a trace: fusible kernel time, a fifth of the step or more, with their bytes against "
        "the HBM bandwidth.",
    .action =
        "model = torch.compile(model), fused blocks (scaled_dot_product_attention, fused norms). "
        "Remedy torch-compile.",
};

}  // namespace chokepoint::rules
