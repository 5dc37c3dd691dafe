// pcie-link-degraded: while the GPU was working, its PCIe link never reached the
// generation or width the GPU and slot support. Links drop to Gen1 at idle to save power
// and come back under load, so only the active window is judged, and only its best value.
#include <algorithm>

#include <fmt/format.h>

#include "rules/checks/checks.h"
#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// Ticks where the degraded link carried half its ceiling or more are the ones a faster
// link would have shortened; their share sets the severity.
constexpr double kBusyLinkFraction = 0.5;
}  // namespace

std::optional<Finding> pcie_link_degraded(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const GpuLive* g : c.la.judged_gpus()) {
    if (g->active_start_ns < 0 || !g->link_gen_seen || !g->link_width_seen) continue;
    const double gen_max = g->link_gen_max.value_or(*g->link_gen_seen);
    const double width_max = g->link_width_max.value_or(*g->link_width_seen);
    const bool slow_gen = *g->link_gen_seen < gen_max, narrow = *g->link_width_seen < width_max;
    if (!slow_gen && !narrow) continue;
    const double seen = pcie_gbps_per_direction(*g->link_gen_seen, *g->link_width_seen);
    const double full = pcie_gbps_per_direction(gen_max, width_max);
    const samples::Series* rx = gpu_series(c, *g, MetricId::kGpuPcieRxBytesPerS);
    const samples::Series* tx = gpu_series(c, *g, MetricId::kGpuPcieTxBytesPerS);
    const int64_t age = max_age_ns(c.la);
    const double busy_bps = kBusyLinkFraction * seen * 1e9;
    const std::optional<double> busy_share = tick_share(
        analyses::sampled::active_ticks(c.la, *g), [&](int64_t t) -> std::optional<bool> {
          const auto r = analyses::sampled::held(rx, t, age), x = analyses::sampled::held(tx, t, age);
          if (!r && !x) return std::nullopt;
          return std::max(r.value_or(0), x.value_or(0)) >= busy_bps;
        });
    const double share = busy_share.value_or(0);
    Finding f = new_finding(100 * share, std::nullopt);
    // A link below its capability is a fault to fix even when this job barely used it.
    f.severity = std::max(f.severity, Severity::kWarning);  // at least a warning (info < warning < critical)
    f.title = fmt::format("{}: PCIe link ran at Gen{:.0f} x{:.0f} while working, the device supports Gen{:.0f} x{:.0f}",
                          gpu_label(*g), *g->link_gen_seen, *g->link_width_seen, gen_max, width_max);
    f.detail = fmt::format(
        "The best link state seen during the {:.1f} s active window gives {:.1f} GB/s per direction "
        "instead of {:.1f} GB/s ({:.0f}%). {}{}",
        g->active_s(), seen, full, full > 0 ? 100 * seen / full : 0.0,
        narrow ? "Width does not drop to save power: a narrower link is a seating, riser or slot problem. " : "",
        busy_share ? fmt::format("The link carried >= {:.0f}% of its degraded ceiling in {:.0f}% of the active ticks.",
                                 100 * kBusyLinkFraction, 100 * share)
                   : std::string("PCIe throughput was not sampled, so how much this job lost is unknown."));
    // Each against its maximum: either below it fires the rule, so neither is "fires <= max".
    f.evidence = {evidence_vs_ceiling("link_gen_seen", *g->link_gen_seen, "gen", gen_max),
                  evidence_vs_ceiling("link_width_seen", *g->link_width_seen, "lanes", width_max),
                  evidence_vs_ceiling("link_gbps_seen", seen, "GB/s", full)};
    if (busy_share) f.evidence.push_back(evidence("ticks_link_busy_pct", 100 * share, "%"));
    f.recommendation =
        narrow ? "Reseat the GPU or move it to a full x16 slot; check risers, retimers and PCIe switches "
                 "between it and the CPU (or ask the provider). `chokepoint doctor` shows the link state."
               : "Check the BIOS PCIe speed setting (Auto / the highest Gen) and any riser or switch that limits "
                 "the generation; confirm with `nvidia-smi -q -d PCIE` under load and `chokepoint doctor`.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain pcie-link-degraded` prints.
extern const Rule pcie_link_degraded_rule = {
    .id = "pcie-link-degraded",
    .category = Category::kTransfer,
    .samples = pcie_link_degraded,
    .machine = checks::pcie_link_degraded,
    .bench = checks::bench_pcie_link,
    .meaning =
        "The GPU's PCIe link runs below the generation or width that the GPU and slot support (a "
        "bad riser, a wrong slot, a BIOS setting), so every copy is slower.",
    .detection =
        "From live samples: the best link seen while the GPU worked stays below its maximum "
        "(links drop at idle to save power, so idle time is not judged). doctor reads the same "
        "from NVML.",
    .action =
        "Reseat the card or move it to a full x16 slot, check the BIOS PCIe settings and risers; "
        "chokepoint doctor shows the link.",
};

}  // namespace chokepoint::rules
