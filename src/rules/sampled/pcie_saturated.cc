// pcie-saturated: PCIe RX (host -> GPU) or TX (GPU -> host) runs near the link's ceiling,
// so copies, not the GPU, set the pace whenever they happen.
#include <algorithm>

#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// Near the ceiling: 80% of the theoretical link. Pinned copies reach about 88% of it
// (55.4 GB/s measured by `chokepoint bench` on the H200's Gen5 x16 against 63 GB/s:
// docs/VALIDATION.md; docs/FORMATS.md "H200 figures" has 53.1 / 55.3), so 80% is within a tenth
// of what the link can carry at all.
constexpr double kNearCeilingFraction = 0.80;
}  // namespace

std::optional<Finding> pcie_saturated(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const GpuLive* g : c.la.judged_gpus()) {
    // The link as it ran (it may be degraded: then that is its ceiling), else its maximum.
    const double gen = g->link_gen_seen.value_or(g->link_gen_max.value_or(0));
    const double width = g->link_width_seen.value_or(g->link_width_max.value_or(0));
    const double ceiling = pcie_gbps_per_direction(gen, width);
    if (ceiling <= 0 || (!g->pcie_rx && !g->pcie_tx)) continue;
    const double limit_bps = kNearCeilingFraction * ceiling * 1e9;
    const double rx95 = g->pcie_rx ? g->pcie_rx->p95 : 0, tx95 = g->pcie_tx ? g->pcie_tx->p95 : 0;
    if (std::max(rx95, tx95) < limit_bps) continue;
    const bool rx = rx95 >= tx95;
    const samples::Series* s = gpu_series(c, *g, rx ? MetricId::kGpuPcieRxBytesPerS : MetricId::kGpuPcieTxBytesPerS);
    const int64_t age = max_age_ns(c.la);
    const double share = tick_share(analyses::sampled::active_ticks(c.la, *g), [&](int64_t t) -> std::optional<bool> {
                           const auto v = analyses::sampled::held(s, t, age);
                           if (!v) return std::nullopt;
                           return *v >= limit_bps;
                         }).value_or(0);
    const auto& st = rx ? *g->pcie_rx : *g->pcie_tx;
    Finding f = new_finding(100 * share, std::nullopt);
    f.title = fmt::format("{}: PCIe {} at {:.1f} GB/s (p95), {:.0f}% of the Gen{:.0f} x{:.0f} link", gpu_label(*g),
                          rx ? "host -> GPU" : "GPU -> host", st.p95 / 1e9, 100 * st.p95 / (ceiling * 1e9), gen, width);
    f.detail = fmt::format(
        "The {} direction carried {:.1f} GB/s on average and {:.1f} GB/s at the 95th percentile over the "
        "{:.1f} s active window; the link's theoretical ceiling is {:.1f} GB/s per direction and it ran "
        "at >= {:.0f}% of it in {:.0f}% of the ticks. Copies in that direction cannot go faster.",
        rx ? "host -> GPU" : "GPU -> host", st.mean / 1e9, st.p95 / 1e9, g->active_s(), ceiling,
        100 * kNearCeilingFraction, 100 * share);
    f.evidence = {evidence(rx ? "pcie_rx_p95_gbps" : "pcie_tx_p95_gbps", st.p95 / 1e9, "GB/s", limit_bps / 1e9),
                  evidence(rx ? "pcie_rx_mean_gbps" : "pcie_tx_mean_gbps", st.mean / 1e9, "GB/s"),
                  evidence("link_ceiling_gbps", ceiling, "GB/s"), evidence("ticks_near_ceiling_pct", 100 * share, "%")};
    f.recommendation =
        "The link is saturated, so move fewer bytes: send uint8/fp16 and convert on the GPU, decode "
        "images on the GPU (nvJPEG / DALI), keep reused tensors (embeddings, the dataset if it fits) "
        "resident on the GPU, and avoid GPU -> host round trips (.cpu(), .item(), logging tensors every "
        "step); overlap what remains with compute (pinned memory, non_blocking=True, a side stream).";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain pcie-saturated` prints.
extern const Rule pcie_saturated_rule = {
    .id = "pcie-saturated",
    .category = Category::kTransfer,
    .samples = pcie_saturated,
    .saturates_the_link = true,
    .meaning =
        "PCIe host->GPU or GPU->host traffic runs near the link's ceiling, so copies, not the "
        "GPU, set the pace while they run.",
    .detection = "From live samples: NVML PCIe RX or TX at 80% of the link's theoretical rate or more.",
    .action =
        "Copy less (keep data on the GPU, decode on the GPU, smaller dtypes) and overlap the rest "
        "with compute.",
};

}  // namespace chokepoint::rules
