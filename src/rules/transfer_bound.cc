// transfer-bound: host<->device copies that no kernel overlaps take a large part of the
// step, or they run near the link's ceiling.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// The TensorBoard plugin's step breakdown puts Memcpy right after Kernel; when exposed
// copies take a fifth of the step they, not the kernels, are the thing to fix.
constexpr double kMinExposedPct = 20.0;
// A link running at 80% of its achievable rate is saturated: pinning will not help more.
constexpr double kSaturatedFraction = 0.8;
}  // namespace

std::optional<Finding> transfer_bound(const TraceEvidence& c) {
  const auto& tr = c.a.transfers;
  const double share = c.a.pct(tr.host_device_exposed_ns);
  if (tr.host_device_ns == 0 || share < kMinExposedPct) return std::nullopt;
  const auto& t = c.a.total();
  const double achieved = static_cast<double>(tr.host_device_bytes) / static_cast<double>(tr.host_device_ns);
  const auto& ceil = c.a.ceilings.pcie_gbps;
  const bool saturated = ceil && achieved >= kSaturatedFraction * *ceil;
  // Overlapped with compute, copies cost only what exceeds the rest of the step; pageable
  // ones first become pinned (pageable-memcpy's what-if).
  const TimeNs copies = tr.host_device_ns - (ceil ? tr.pageable_ns - tr.pageable_at_pinned_ns : 0);
  const TimeNs rest = t.duration - tr.host_device_exposed_ns;
  const TimeNs after = std::max(rest, copies);
  const double speedup = analyses::projected_speedup(t.duration, t.duration - after, 0);

  Finding f = new_finding(share, speedup);
  // Copies from pageable memory first become pinned and asynchronous (one remedy, one
  // estimate with pageable-memcpy); pinned copies that still dominate need fewer bytes.
  if (tr.pageable_count > 0) f.remedies = {"pinned-copies"};
  f.title = fmt::format("Host<->device copies take {:.0f}% of the step with nothing overlapping them", share);
  f.detail = fmt::format(
      "{:.1f} MB per step cross the link at {:.1f} GB/s{}; {:.2f} ms per step of copying is not "
      "overlapped by any kernel.",
      c.a.per_step(static_cast<double>(tr.host_device_bytes)) / 1e6, achieved,
      ceil ? fmt::format(" ({:.0f}% of the {:.0f} GB/s ceiling)", 100 * achieved / *ceil, *ceil) : std::string(),
      c.a.ms_per_step(tr.host_device_exposed_ns));
  f.evidence = {evidence("exposed_copy_pct", share, "%", kMinExposedPct),
                // Shown against the link's ceiling: the rate picks the advice, it does not fire the rule
                // (it printed "fires >= 42.8 GB/s" beside 7.13 GB/s).
                evidence_vs_ceiling("copy_gbps", achieved, "GB/s", ceil),
                evidence("copy_ms_per_step", c.a.ms_per_step(tr.host_device_ns), "ms")};
  f.recommendation = saturated
                         ? "The link is saturated: move fewer bytes (send uint8/fp16 and convert on the GPU, keep "
                           "reused tensors resident on the GPU, avoid round trips to the host), and overlap what "
                           "remains with compute (prefetch the next batch on a side stream with non_blocking=True)."
                         : "Overlap copies with compute: pinned memory + .to(device, non_blocking=True), prefetch the "
                           "next batch on a side CUDA stream while this one computes, and keep reused data on the GPU.";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain transfer-bound` prints.
extern const Rule transfer_bound_rule = {
    .id = "transfer-bound",
    .category = Category::kTransfer,
    .trace = transfer_bound,
    .meaning =
        "Host<->device copies that no kernel overlaps take a large part of the step, or run near "
        "the link's ceiling.",
    .detection =
        "From a trace: exposed copy time, a fifth of the step or more, or copies at 80% of the "
        "link's achievable rate.",
    .action =
        "Copy less (keep data on the GPU, smaller dtypes), overlap copies with compute (pinned, "
        "non_blocking, a side stream); when the link is saturated pinning no longer helps. Remedy "
        "pinned-copies when some copies are pageable.",
};

}  // namespace chokepoint::rules
