// unfused-optimizer: the optimizer step launches a kernel (or several) per parameter
// tensor: AdamW(foreach=False), hand-written update loops, or foreach kernels where a
// fused one exists. On a small or mid-size model its launches take longer than the
// forward and backward kernels.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// The fused step must be worth it: the same bar as the headline (diagnose.cc).
constexpr double kMinGain = 1.05;
}  // namespace

std::optional<Finding> unfused_optimizer(const TraceEvidence& c) {
  const auto* e = analyses::estimate_of(c.a, analyses::whatif::Remedy::kFusedOptimizer);
  if (e == nullptr || e->speedup < kMinGain) return std::nullopt;
  // The share of the step the optimizer's host time and kernels took (the replay's change).
  const double share = 100.0 * (1.0 - 1.0 / e->speedup);
  Finding f = new_finding(share, e->speedup);
  f.remedies = {"fused-optimizer"};
  f.title = "The optimizer step launches a kernel per parameter: " + e->change;
  f.detail = fmt::format(
      "Inside Optimizer.step the host issues the update of each parameter tensor separately; the replay with a "
      "fused optimizer ({}) takes the step from {:.2f} to {:.2f} ms.",
      e->change, e->step_ms_before, e->step_ms_after);
  f.evidence = {evidence("fused_step_gain", e->speedup, "x", kMinGain),
                evidence("step_ms_before", e->step_ms_before, "ms"), evidence("step_ms_after", e->step_ms_after, "ms")};
  f.recommendation = "torch.optim.AdamW(model.parameters(), lr=..., fused=True) (also Adam, SGD, Adagrad).";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain unfused-optimizer` prints.
extern const Rule unfused_optimizer_rule = {
    .id = "unfused-optimizer",
    .category = Category::kHost,
    .trace = unfused_optimizer,
    .meaning =
        "The optimizer step launches a kernel (or several) per parameter tensor (foreach=False, a "
        "hand-written update loop), which on a small or mid-size model takes longer than forward "
        "and backward.",
    .detection =
        "From a trace: the optimizer's kernels and launches per step, when replaying with one "
        "fused step gains at least 1.05x.",
    .action =
        "torch.optim.AdamW(params, fused=True) (Adam, SGD, Adagrad have it too). Remedy "
        "fused-optimizer.",
};

}  // namespace chokepoint::rules
