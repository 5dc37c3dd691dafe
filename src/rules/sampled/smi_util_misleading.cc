// smi-util-misleading: nvidia-smi utilization is high while GPM SM activity is low. The
// utilization counter is the share of time *any* kernel ran, however few SMs it used; a
// job of small kernels reads "100%" on a GPU that is mostly empty. Needs GPM (Hopper+).
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// "nvidia-smi says the GPU is busy": the usual 80% a person reads as saturated.
constexpr double kHighUtilPct = 80.0;
// At most half the SMs active on average: the GPU could do twice the work (DCGM's
// profiling guide treats SM activity below 50% as a poorly used GPU).
constexpr double kLowSmActivePct = 50.0;
}  // namespace

std::optional<Finding> smi_util_misleading(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const GpuLive* g : c.la.judged_gpus()) {
    if (!g->util || !g->sm_active) continue;
    if (g->util->mean < kHighUtilPct || g->sm_active->mean > kLowSmActivePct) continue;
    const samples::Series* util = gpu_series(c, *g, MetricId::kGpuUtilization);
    const samples::Series* sm = gpu_series(c, *g, MetricId::kGpuSmActive);
    const int64_t age = max_age_ns(c.la);
    const double share = tick_share(analyses::sampled::active_ticks(c.la, *g), [&](int64_t t) -> std::optional<bool> {
                           const auto u = analyses::sampled::held(util, t, age);
                           const auto s = analyses::sampled::held(sm, t, age);
                           if (!u || !s) return std::nullopt;
                           return *u >= kHighUtilPct && *s <= kLowSmActivePct;
                         }).value_or(0);
    Finding f = new_finding(100 * share, std::nullopt);
    f.title = fmt::format("{}: nvidia-smi shows {:.0f}% utilization but only {:.0f}% of SM time is active",
                          gpu_label(*g), g->util->mean, g->sm_active->mean);
    f.detail = fmt::format(
        "Over the {:.1f} s active window kernels ran {:.0f}% of the time, yet the SMs were active {:.0f}% "
        "of it on average{}{}: the kernels are too small or too short to fill the {} GPU. The "
        "utilization figure counts time with any kernel running, not how much of the GPU it used.",
        g->active_s(), g->util->mean, g->sm_active->mean,
        g->sm_occupancy ? fmt::format(" (warp occupancy {:.0f}%)", g->sm_occupancy->mean) : std::string(),
        g->tensor_active ? fmt::format(", tensor cores {:.0f}%", g->tensor_active->mean) : std::string(), g->name);
    f.evidence = {evidence("gpu_utilization_mean_pct", g->util->mean, "%", kHighUtilPct),
                  evidence_at_most("sm_active_mean_pct", g->sm_active->mean, "%", kLowSmActivePct),
                  evidence("ticks_util_high_sm_low_pct", 100 * share, "%")};
    if (g->sm_occupancy) f.evidence.push_back(evidence("sm_occupancy_mean_pct", g->sm_occupancy->mean, "%"));
    if (g->tensor_active) f.evidence.push_back(evidence("tensor_active_mean_pct", g->tensor_active->mean, "%"));
    f.recommendation =
        "Give each kernel more work: a larger batch (or several micro-batches fused), fewer and larger "
        "kernels (torch.compile fuses elementwise chains), CUDA Graphs when launches are short; run "
        "`chokepoint run --trace` then `chokepoint kernels` to find the kernels with grids smaller than "
        "the SM count or low occupancy.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain smi-util-misleading` prints.
extern const Rule smi_util_misleading_rule = {
    .id = "smi-util-misleading",
    .category = Category::kCompute,
    .samples = smi_util_misleading,
    .meaning =
        "nvidia-smi utilization is high while few SMs work: that counter is the share of time any "
        "kernel ran, however small, so a job of small kernels reads 100% on a mostly empty GPU.",
    .detection =
        "From live samples with GPM (Hopper and newer): utilization 80% or more while SM activity "
        "is at most half.",
    .action =
        "Judge the GPU by SM activity, not utilization; give kernels more work (bigger batch, "
        "fusion, CUDA Graphs).",
};

}  // namespace chokepoint::rules
