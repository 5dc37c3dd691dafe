// cpu-steal: the hypervisor runs other guests on this VM's CPUs; the job loses that time
// on every thread (data loading, kernel launches) and cannot get it back.
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// Steal above 5% of all CPUs is a noisy neighbour or an over-committed host; cloud
// guidance treats sustained steal of a few percent as the point to resize or move.
constexpr double kMinStealPct = 5.0;
// A tenth of the run: sustained, not one burst.
constexpr double kMinShare = 0.10;
}  // namespace

std::optional<Finding> cpu_steal(const SampleEvidence& c) {
  const samples::Series* steal = host_series(c, MetricId::kHostCpuStealPct);
  const int64_t age = max_age_ns(c.la);
  const std::optional<double> share = tick_share(work_ticks(c.la), [&](int64_t t) -> std::optional<bool> {
    const auto v = analyses::sampled::held(steal, t, age);
    if (!v) return std::nullopt;
    return *v >= kMinStealPct;
  });
  const auto& st = c.la.host.steal_pct;
  if (!share || *share < kMinShare || !st) return std::nullopt;
  Finding f = new_finding(100 * *share, std::nullopt);
  f.title = fmt::format("The hypervisor took {:.1f}% of the CPU time on average ({:.0f}% at p95)", st->mean, st->p95);
  f.detail = fmt::format(
      "Steal was >= {:.0f}% in {:.0f}% of the {:.1f} s run: the VM's virtual CPUs were runnable but the "
      "host ran something else. Every CPU-side part of the job (data loading, Python, kernel launches) "
      "slows by that share, unpredictably.",
      kMinStealPct, 100 * *share, c.la.duration_s);
  f.evidence = {evidence("steal_ticks_pct", 100 * *share, "%", 100 * kMinShare),
                evidence("steal_mean_pct", st->mean, "%"), evidence("steal_p95_pct", st->p95, "%")};
  f.recommendation =
      "Use dedicated or bare-metal instances (or a larger instance size that owns whole cores), ask "
      "the provider about host over-commit, and keep CPU-side work light (fewer, cheaper DataLoader "
      "transforms; CUDA Graphs to cut launch work) so stolen time costs less.";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain cpu-steal` prints.
extern const Rule cpu_steal_rule = {
    .id = "cpu-steal",
    .category = Category::kHost,
    .samples = cpu_steal,
    .meaning =
        "The hypervisor runs other guests on this VM's CPUs; the job loses that time on every "
        "thread.",
    .detection = "From live samples: steal above 5% of the CPUs for a tenth of the run.",
    .action = "Move to a dedicated or larger instance; ask the provider about the host.",
};

}  // namespace chokepoint::rules
