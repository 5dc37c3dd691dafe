// pageable-memcpy: host<->device copies from or to pageable memory. The driver stages
// them through a pinned buffer at a fraction of the link's speed, and the host blocks.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Nsight Systems' cuda_memcpy_async rule reports any pageable copy; we ask for 1% of the
// step so that a stray one-off copy does not make a finding.
constexpr double kMinSharePct = 1.0;
}  // namespace

std::optional<Finding> pageable_memcpy(const RuleContext& c) {
  const auto& tr = c.a.transfers;
  const double share = c.a.pct(tr.pageable_ns);
  if (tr.pageable_count == 0 || share < kMinSharePct) return std::nullopt;
  const auto& t = c.a.total();
  const double achieved = tr.pageable_ns > 0 ? static_cast<double>(tr.pageable_bytes) / static_cast<double>(tr.pageable_ns) : 0;
  // Pinned copies of the same bytes at the link's achievable rate.
  const bool known = c.a.ceilings.pcie_gbps.has_value();
  const TimeNs saved = known ? tr.pageable_ns - tr.pageable_at_pinned_ns : 0;
  const double speedup = analyses::projected_speedup(t.duration, saved, 0);

  Finding f = new_finding("pageable-memcpy", Category::kTransfer, share, known ? std::optional<double>(speedup) : std::nullopt);
  f.title = fmt::format("{:.0f}% of the step copies pageable host memory at {:.1f} GB/s", share, achieved);
  f.detail = fmt::format(
      "{:.0f} copies per step move {:.1f} MB from/to pageable memory in {:.2f} ms per step. "
      "Pageable copies are staged by the driver and block the calling thread; pinned memory "
      "reaches {} here.",
      c.a.per_step(tr.pageable_count),
      c.a.per_step(static_cast<double>(tr.pageable_bytes)) / 1e6,
      c.a.ms_per_step(tr.pageable_ns),
      known ? fmt::format("~{:.0f} GB/s ({})", *c.a.ceilings.pcie_gbps, c.a.ceilings.source)
            : std::string("an unknown rate (no ceiling for this GPU)"));
  f.evidence = {evidence("pageable_copy_pct", share, "%", kMinSharePct),
                evidence("pageable_gbps", achieved, "GB/s"),
                evidence("pageable_mb_per_step", c.a.per_step(static_cast<double>(tr.pageable_bytes)) / 1e6, "MB")};
  if (known) f.evidence.push_back(evidence("pinned_ceiling_gbps", *c.a.ceilings.pcie_gbps, "GB/s"));
  f.recommendation =
      "Copy from pinned memory and asynchronously: DataLoader(..., pin_memory=True) for batches, "
      "tensor.pin_memory() once for tensors reused every step, then x.to(device, non_blocking=True). "
      "Better still, keep data that does not change on the GPU.";
  return f;
}

}  // namespace chokepoint::rules
