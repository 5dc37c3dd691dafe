// launch-overhead: many short kernels; the GPU idles between launches.
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"
#include "rules/sampled/starvation.h"

namespace chokepoint::rules {
namespace {
// Idle time spent launching that is worth a change of code (10% of the step; HTA flags
// launch-bound work on the same order through its critical-path "launch overhead").
constexpr double kMinSharePct = 10.0;
}  // namespace

std::optional<Finding> launch_overhead(const TraceEvidence& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const auto& api = c.a.api;
  const TimeNs idle = t.idle_of(IdleCause::kLaunchOverhead);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct || api.kernels == 0) return std::nullopt;

  const double per_step = c.a.per_step(api.kernels);
  const double short_pct = 100.0 * static_cast<double>(api.short_kernels) / static_cast<double>(api.kernels);
  const double api_us = api.launches + api.graph_launches > 0
                            ? static_cast<double>(api.launch_api_ns) / 1e3 /
                                  static_cast<double>(api.launches + api.graph_launches)
                            : 0.0;

  Finding f = new_finding(share, std::nullopt);
  f.remedies = {"cuda-graphs", "bigger-batch"};
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

// From live samples: the GPU is starved while the main process is CPU-saturated and
// the little GPU time there is goes to kernels that fill almost no SM (starvation.h).
namespace chokepoint::rules {

std::optional<Finding> launch_overhead_samples(const SampleEvidence& c) {
  using sampled::StarveCause;
  std::optional<Finding> worst;
  for (const auto* g : c.la.judged_gpus()) {
    const sampled::Starvation all = sampled::starvation(c, *g);
    const double share = all.share(StarveCause::kLaunch);
    if (share < sampled::kMinStarvedShare) continue;
    const auto& k = all.of(StarveCause::kLaunch);
    const double busy = k.busy / static_cast<double>(k.ticks);
    const double sm = k.sm_ticks > 0 ? k.sm / static_cast<double>(k.sm_ticks) : 0;
    Finding f = new_finding(100 * share, all.speedup_without(StarveCause::kLaunch));
    f.remedies = {"cuda-graphs", "bigger-batch"};
    f.title = fmt::format(
        "{}: kernels run {:.0f}% of the time but fill {:.1f}% of the SMs while the main process is "
        "CPU-bound: launch overhead",
        sampled::gpu_label(*g), busy, sm);
    f.detail = fmt::format(
        "In {} of {} sampled ticks of the {:.1f} s active window the main process used >= {:.0f}% of a core while "
        "kernels ran {:.0f}% of the time (nvidia-smi utilization) and the SMs were {:.1f}% active (GPM): a stream "
        "of tiny kernels, each launched by Python/framework code slower than the GPU runs it. A trace "
        "(`chokepoint run --trace`, torch.profiler) gives the launch rate and kernel durations.",
        k.ticks, all.measured, g->active_s(), sampled::kSaturatedCpuPct, busy, sm);
    f.evidence = {evidence("launch_bound_ticks_pct", 100 * share, "%", 100 * sampled::kMinStarvedShare),
                  evidence("gpu_utilization_pct", busy, "%"), evidence_at_most("sm_active_pct", sm, "%", 10.0)};
    f.recommendation =
        "Launch fewer, bigger kernels: capture the step in a CUDA Graph (torch.cuda.graphs / "
        "torch.compile(mode=\"reduce-overhead\")), fuse elementwise chains (torch.compile), use foreach/fused "
        "optimizers (fused=True), and raise the batch size so each kernel does more work.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain launch-overhead` prints.
extern const Rule launch_overhead_rule = {
    .id = "launch-overhead",
    .category = Category::kHost,
    .trace = launch_overhead,
    .samples = launch_overhead_samples,
    .meaning =
        "Many short kernels: the GPU finishes each one faster than Python and the framework "
        "launch the next, so it idles between launches.",
    .detection =
        "From a trace: idle time between kernels while the launching thread is in launch calls, "
        "10% of the step or more. From live samples: a starved GPU, a CPU-saturated main process, "
        "and kernels that fill almost no SM.",
    .action =
        "Capture the step in CUDA Graphs (torch.compile mode=\"reduce-overhead\"), or give each "
        "kernel more work (bigger batch). Remedies cuda-graphs, bigger-batch.",
};

}  // namespace chokepoint::rules
