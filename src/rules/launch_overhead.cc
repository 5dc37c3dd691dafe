// launch-overhead: many short kernels; the GPU idles between launches.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Idle time spent launching that is worth a change of code (10% of the step; HTA flags
// launch-bound work on the same order through its critical-path "launch overhead").
constexpr double kMinSharePct = 10.0;
// A CUDA Graph replays a kernel node in ~0.5 us on the H200 (REFERENCE.md section 1).
constexpr TimeNs kGraphNodeNs = 500;
}  // namespace

std::optional<Finding> launch_overhead(const RuleContext& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const auto& api = c.a.api;
  const TimeNs idle = t.idle_of(IdleCause::kLaunchOverhead);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct || api.kernels == 0) return std::nullopt;

  // With the step captured in a CUDA Graph, launch gaps shrink to the per-node cost.
  const TimeNs graph_cost = kGraphNodeNs * api.kernels;
  const double speedup = analyses::projected_speedup(t.duration, idle - graph_cost, 0);
  const double per_step = c.a.per_step(api.kernels);
  const double short_pct = 100.0 * static_cast<double>(api.short_kernels) / static_cast<double>(api.kernels);
  const double api_us = api.launches + api.graph_launches > 0
                            ? static_cast<double>(api.launch_api_ns) / 1e3 / static_cast<double>(api.launches + api.graph_launches)
                            : 0.0;

  Finding f = new_finding("launch-overhead", Category::kHost, share, speedup);
  f.title = fmt::format("GPU idles {:.0f}% of the step between kernel launches ({:.0f} kernels/step, median {:.1f} us)",
                        share, per_step, api.kernel_p50_us);
  f.detail = fmt::format(
      "{:.0f}% of kernels run shorter than {:.0f} us, about the cost of launching one "
      "({:.1f} us per launch call here), so the CPU cannot keep the GPU fed: {:.2f} ms per step "
      "is spent dispatching ops and launching while the GPU waits.",
      short_pct, analyses::kShortKernelNs / 1e3, api_us, c.a.ms_per_step(idle));
  f.evidence = {evidence("launch_gap_pct", share, "%", kMinSharePct),
                evidence("kernels_per_step", per_step, ""),
                evidence("short_kernels_pct", short_pct, "%"),
                evidence("kernel_p50_us", api.kernel_p50_us, "us"),
                evidence("launch_api_us_mean", api_us, "us"),
                evidence("launch_to_start_p50_us", api.launch_delay_p50_us, "us")};
  f.recommendation =
      "Cut the number of launches: capture the step in a CUDA Graph (torch.compile(model, "
      "mode=\"reduce-overhead\") or torch.cuda.graphs with static shapes), let torch.compile fuse "
      "small ops, use fused/foreach optimizers (torch.optim.AdamW(fused=True)), or raise the batch "
      "size so each kernel does more work.";
  return f;
}

}  // namespace chokepoint::rules
