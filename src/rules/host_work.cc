// host-work: the thread that launches GPU work is busy outside CUDA and ATen (Python,
// preprocessing, logging) while the GPU idles.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Host time outside the framework worth a change (10% of the step, the same bar as
// launch-overhead: both mean the CPU, not the GPU, sets the pace).
constexpr double kMinSharePct = 10.0;
}  // namespace

std::optional<Finding> host_work(const RuleContext& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const TimeNs idle = t.idle_of(IdleCause::kHostWork);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct) return std::nullopt;

  // Upper bound: all of it moved off the critical path (overlapped or removed).
  const double speedup = analyses::projected_speedup(t.duration, idle, 0);
  Finding f = new_finding("host-work", Category::kHost, share, speedup);
  f.title = fmt::format("GPU idles {:.1f} ms per step ({:.0f}%) while the CPU runs Python/host code",
                        c.a.ms_per_step(idle), share);
  f.detail = fmt::format(
      "Between GPU launches the launching thread spends {:.1f} ms per step outside any PyTorch "
      "op or CUDA call (its whole step takes {:.1f} ms of CPU, the GPU is busy {:.1f} ms). The "
      "speedup assumes all of it leaves the critical path; it is an upper bound.",
      c.a.ms_per_step(idle), c.a.ms_per_step(t.host_critical), c.a.ms_per_step(t.busy));
  f.evidence = {evidence("gpu_idle_in_host_code_pct", share, "%", kMinSharePct),
                evidence("host_ms_per_step", c.a.ms_per_step(t.host_critical), "ms"),
                evidence("gpu_busy_ms_per_step", c.a.ms_per_step(t.busy), "ms")};
  f.recommendation =
      "Find the Python hot spots (py-spy record -o profile.svg -- python train.py, or "
      "torch.profiler with with_stack=True) and move per-step bookkeeping, logging and metric "
      "computation off the loop (every N steps, or in a background thread), vectorize it, or do "
      "it on the GPU; move CPU preprocessing into DataLoader workers.";
  return f;
}

}  // namespace chokepoint::rules
