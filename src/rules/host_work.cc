// host-work: the thread that launches GPU work is busy outside CUDA and ATen (Python,
// preprocessing, logging) while the GPU idles.
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"
#include "rules/sampled/starvation.h"

namespace chokepoint::rules {
namespace {
// Host time outside the framework worth a change (10% of the step, the same bar as
// launch-overhead: both mean the CPU, not the GPU, sets the pace).
constexpr double kMinSharePct = 10.0;
}  // namespace

std::optional<Finding> host_work(const TraceEvidence& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const TimeNs idle = t.idle_of(IdleCause::kHostWork);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct) return std::nullopt;

  // Upper bound: all of it moved off the critical path (overlapped or removed).
  const double speedup = analyses::projected_speedup(t.duration, idle, 0);
  Finding f = new_finding(share, speedup);
  f.remedies = {"move-host-work"};
  f.title = fmt::format("GPU idles {:.1f} ms per step ({:.0f}%) while the CPU runs Python/host code",
                        c.a.ms_per_step(idle), share);
  f.detail = fmt::format(
      "Between GPU launches the launching thread spends {:.1f} ms per step outside any PyTorch "
      "op or CUDA call (its whole step takes {:.1f} ms of CPU, the GPU is busy {:.1f} ms). The "
      "speedup assumes all of it leaves the critical path; it is an upper bound.",
      c.a.ms_per_step(idle), c.a.ms_per_step(t.host_critical), c.a.ms_per_step(t.busy));
  f.evidence = {evidence("gpu_idle_in_host_code_pct", share, "%", kMinSharePct),
                evidence("host_critical_ms_per_step", c.a.ms_per_step(t.host_critical), "ms"),
                evidence("gpu_busy_ms_per_step", c.a.ms_per_step(t.busy), "ms")};
  f.recommendation =
      "Find the Python hot spots (py-spy record -o profile.svg -- python train.py, or "
      "torch.profiler with with_stack=True) and move per-step bookkeeping, logging and metric "
      "computation off the loop (every N steps, or in a background thread), vectorize it, or do "
      "it on the GPU; move CPU preprocessing into DataLoader workers.";
  return f;
}

}  // namespace chokepoint::rules

// From live samples: the GPU is starved while the main process is CPU-saturated and
// shows no sign of loading data (no busy DataLoader workers, no reads from storage) nor
// of staging copies or launching tiny kernels (live/starvation.h): the process's own
// Python, framework overhead or per-step synchronizations hold the GPU back.
namespace chokepoint::rules {

std::optional<Finding> host_work_samples(const SampleEvidence& c) {
  using sampled::StarveCause;
  std::optional<Finding> worst;
  for (const auto* g : c.la.judged_gpus()) {
    const sampled::Starvation all = sampled::starvation(c, *g);
    const double share = all.share(StarveCause::kHost);
    if (share < sampled::kMinStarvedShare) continue;
    const auto& k = all.of(StarveCause::kHost);
    const double busy = k.busy / static_cast<double>(k.ticks);
    // No estimate: which of its work would go, samples cannot say.
    Finding f = new_finding(100 * share, std::nullopt);
    f.remedies = {"move-host-work"};
    f.title = fmt::format("{} starved in {:.0f}% of its active time while the main process was CPU-saturated",
                          sampled::gpu_label(*g), 100 * share);
    f.detail = fmt::format(
        "In {} of {} sampled ticks of the {:.1f} s active window the GPU was busy only {:.0f}% on average while the "
        "main process used >= {:.0f}% of a core, with no DataLoader worker busy and nothing read from storage: its "
        "own Python (per-step bookkeeping, .item() and other syncs, Python threads sharing its GIL) or framework "
        "overhead sets the pace. Samples cannot say which line: `chokepoint run --trace` or py-spy can.",
        k.ticks, all.measured, g->active_s(), busy, sampled::kSaturatedCpuPct);
    f.evidence = {evidence("host_bound_ticks_pct", 100 * share, "%", 100 * sampled::kMinStarvedShare),
                  evidence_at_most("gpu_busy_in_those_ticks_pct", busy, "%", sampled::kStarvedBelowPct)};
    f.recommendation =
        "Find what the main process does between launches (chokepoint run --trace, py-spy record --pid PID), then "
        "take per-step Python off the loop: values read with .item() every N steps, metrics and logging in a "
        "background process, CPU preprocessing in DataLoader workers; launch-bound loops gain from CUDA Graphs "
        "or torch.compile.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain host-work` prints.
extern const Rule host_work_rule = {
    .id = "host-work",
    .category = Category::kHost,
    .trace = host_work,
    .samples = host_work_samples,
    .stacks = host_work_stacks,
    .meaning =
        "The thread that launches GPU work is busy outside CUDA and the framework (Python, "
        "preprocessing, logging, metrics) while the GPU idles.",
    .detection =
        "From a trace: host time outside ATen/CUDA calls on the launching thread while the GPU is "
        "idle, 10% of the step or more. From live samples: a starved GPU, a CPU-saturated main "
        "process and no sign of data loading. From Python stacks: the lines it spends that time "
        "on.",
    .action =
        "Move logging and metric computation off the step (every N steps, or another process); "
        "vectorize per-sample Python. Remedy move-host-work.",
};

}  // namespace chokepoint::rules
