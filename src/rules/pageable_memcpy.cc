// pageable-memcpy: host<->device copies from or to pageable memory. The driver stages
// them through a pinned buffer at a fraction of the link's speed, and the host blocks.
#include <fmt/format.h>

#include "base/plural.h"
#include "rules/checks/checks.h"
#include "rules/rule.h"
#include "rules/sampled/live_util.h"
#include "rules/sampled/starvation.h"

namespace chokepoint::rules {
namespace {
// Nsight Systems' cuda_memcpy_async rule reports any pageable copy; we ask for 1% of the
// step so that a stray one-off copy does not make a finding.
constexpr double kMinSharePct = 1.0;
}  // namespace

std::optional<Finding> pageable_memcpy(const TraceEvidence& c) {
  const auto& tr = c.a.transfers;
  const double share = c.a.pct(tr.pageable_ns);
  if (tr.pageable_count == 0 || share < kMinSharePct) return std::nullopt;
  const auto& t = c.a.total();
  const double achieved = tr.pageable_ns > 0
                              ? static_cast<double>(tr.pageable_bytes) / static_cast<double>(tr.pageable_ns)
                              : 0;
  // Pinned copies of the same bytes at the link's achievable rate.
  const bool known = c.a.ceilings.pcie_gbps.has_value();
  const TimeNs saved = known ? tr.pageable_ns - tr.pageable_at_pinned_ns : 0;
  const double speedup = analyses::projected_speedup(t.duration, saved, 0);

  Finding f = new_finding(share, known ? std::optional<double>(speedup) : std::nullopt);
  f.remedies = {"pinned-copies"};
  f.title = fmt::format("{:.0f}% of the step copies pageable host memory at {:.1f} GB/s", share, achieved);
  f.detail = fmt::format(
      "{} per step {} {:.1f} MB from/to pageable memory in {:.2f} ms per step. "
      "Pageable copies are staged by the driver and block the calling thread; pinned memory "
      "reaches {} here.",
      counted(c.a.per_step(tr.pageable_count), "copy", "copies"),
      std::llround(c.a.per_step(tr.pageable_count)) == 1 ? "moves" : "move",
      c.a.per_step(static_cast<double>(tr.pageable_bytes)) / 1e6, c.a.ms_per_step(tr.pageable_ns),
      known ? fmt::format("~{:.0f} GB/s ({})", *c.a.ceilings.pcie_gbps, c.a.ceilings.source)
            : "a rate this analysis lacks (" + machine::missing_ceiling(c.a.ceilings, "host link bandwidth") + ")");
  f.evidence = {evidence("pageable_copy_pct", share, "%", kMinSharePct), evidence("pageable_gbps", achieved, "GB/s"),
                evidence("pageable_mb_per_step", c.a.per_step(static_cast<double>(tr.pageable_bytes)) / 1e6, "MB")};
  if (known) f.evidence.push_back(evidence("pinned_ceiling_gbps", *c.a.ceilings.pcie_gbps, "GB/s"));
  f.recommendation =
      "Copy from pinned memory and asynchronously: DataLoader(..., pin_memory=True) for batches, "
      "tensor.pin_memory() once for tensors reused every step, then x.to(device, non_blocking=True). "
      "Better still, keep data that does not change on the GPU.";
  return f;
}

}  // namespace chokepoint::rules

// From live samples: the GPU is starved while the main process is CPU-saturated and
// PCIe carries gigabytes per second, far below the link: the CPU is staging pageable
// copies through the driver's pinned buffer (starvation.h).
namespace chokepoint::rules {

std::optional<Finding> pageable_memcpy_samples(const SampleEvidence& c) {
  using sampled::StarveCause;
  std::optional<Finding> worst;
  for (const auto* g : c.la.judged_gpus()) {
    const sampled::Starvation all = sampled::starvation(c, *g);
    const double share = all.share(StarveCause::kTransfer);
    if (share < sampled::kMinStarvedShare) continue;
    const auto& k = all.of(StarveCause::kTransfer);
    const double gbps = k.pcie_bytes_per_s / static_cast<double>(k.ticks) / 1e9;
    const double link = g->link_gen_max && g->link_width_max
                            ? sampled::pcie_gbps_per_direction(*g->link_gen_max, *g->link_width_max)
                            : 0;
    Finding f = new_finding(100 * share, all.speedup_without(StarveCause::kTransfer));
    f.remedies = {"pinned-copies"};
    f.title = fmt::format("{}: copies at {:.1f} GB/s paced by a CPU-bound main process: pageable memory",
                          sampled::gpu_label(*g), gbps);
    f.detail = fmt::format(
        "In {} of {} sampled ticks of the {:.1f} s active window the GPU was mostly idle while PCIe carried "
        "{:.1f} GB/s{} and the main process used >= {:.0f}% of a core. Copies from pageable memory are staged "
        "by the CPU through a pinned bounce buffer, so they run at memcpy speed and block the thread; pinned "
        "copies run at the link's speed asynchronously.",
        k.ticks, all.measured, g->active_s(), gbps,
        link > 0 ? fmt::format(" ({:.0f}% of the {:.0f} GB/s link)", 100 * gbps / link, link) : std::string(),
        sampled::kSaturatedCpuPct);
    f.evidence = {
        evidence("copy_bound_ticks_pct", 100 * share, "%", 100 * sampled::kMinStarvedShare),
        evidence("pcie_gb_per_s", gbps, "GB/s", 2.0),
        evidence_at_most("gpu_busy_pct", k.busy / static_cast<double>(k.ticks), "%", sampled::kStarvedBelowPct)};
    if (link > 0) f.evidence.push_back(evidence("pcie_link_gb_per_s", link, "GB/s"));
    f.recommendation =
        "Copy from pinned memory: DataLoader(pin_memory=True) or tensor.pin_memory() once for reused host buffers, "
        "then .to(device, non_blocking=True); keep data that is reused on the GPU instead of copying it every step.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain pageable-memcpy` prints.
extern const Rule pageable_memcpy_rule = {
    .id = "pageable-memcpy",
    .category = Category::kTransfer,
    .trace = pageable_memcpy,
    .samples = pageable_memcpy_samples,
    .stacks = pageable_memcpy_stacks,
    .bench = checks::bench_pageable,
    // A copy made inside a library's code (a Trainer's _prepare_inputs calling .to) is
    // library time in the stacks, not a copy: the samples' PCIe evidence keeps its say.
    .stacks_can_miss = true,
    .meaning =
        "Host<->device copies from or to pageable memory: the driver stages them through a pinned "
        "buffer at a fraction of the link's speed and the host blocks.",
    .detection =
        "From a trace: memcpy events marked pageable, 1% of the step or more. From live samples: "
        "a starved GPU, a CPU-saturated main process and PCIe far below the link. From Python stacks: "
        "the launching thread held in a line that copies to the GPU (.to(device), .cuda(), copy_) while "
        "the GPU is idle.",
    .action =
        "Pin the host tensors (pin_memory()) and copy with .to(device, non_blocking=True). Remedy "
        "pinned-copies.",
};

}  // namespace chokepoint::rules
