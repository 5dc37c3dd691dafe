// exposed-communication: collectives that no compute kernel overlaps take a part of the
// step (waiting for late ranks excluded: that is straggler-rank's).
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// The TensorBoard plugin's distributed view advises on communication above a tenth of the
// step; XProf flags device collectives from 3% (docs/DISTRIBUTED.md "Thresholds"): 5% between them.
constexpr double kMinExposedPct = 5.0;
}  // namespace

std::optional<Finding> exposed_communication(const RankEvidence& c) {
  const auto& d = c.d;
  if (d.step_ms <= 0) return std::nullopt;
  const double share = 100 * d.exposed_comm_ms / d.step_ms;
  if (share < kMinExposedPct) return std::nullopt;
  Finding f = new_finding(share, what_if(c, analyses::whatif::Remedy::kOverlapComm));
  f.remedies = {"overlap-communication", "accumulate-no-sync"};
  f.title = fmt::format("Collectives with no compute beside them take {:.2f} ms per step ({:.0f}% of the step)",
                        d.exposed_comm_ms, share);
  std::string groups;
  for (size_t i = 0; i < d.groups.size() && i < 3; ++i) {
    const auto& g = d.groups[i];
    if (!groups.empty()) groups += "; ";
    groups += fmt::format(
        "{} x{:.0f}/step{} {:.2f} ms exposed", analyses::distributed::collective_name(g.kind), g.per_step,
        g.bytes > 0 ? fmt::format(" of {:.1f} MB", static_cast<double>(g.bytes) / 1e6) : "", g.exposed_ms_per_step);
    if (g.bus_gbps) {
      groups += fmt::format(" at {:.0f} GB/s bus bandwidth", *g.bus_gbps);
      if (d.link_gbps)
        groups += fmt::format(" ({:.0f}% of {}'s {:.0f} GB/s)", 100 * *g.bus_gbps / *d.link_gbps, d.link, *d.link_gbps);
    }
  }
  f.detail = fmt::format(
      "Of {:.2f} ms per step in collectives on the median rank ({} backend), {:.2f} ms overlap no compute kernel, "
      "waiting for late ranks not counted. By collective: {}.",
      d.comm_ms, d.backend.empty() ? "unknown" : d.backend, d.exposed_comm_ms, groups.empty() ? "none" : groups);
  f.evidence = {evidence("exposed_comm_pct", share, "%", kMinExposedPct),
                evidence("exposed_comm_ms_per_step", d.exposed_comm_ms, "ms"),
                evidence("compute_ms_per_step", d.compute_ms, "ms")};
  if (!d.groups.empty() && d.groups.front().bus_gbps)
    f.evidence.push_back(evidence_vs_ceiling("bus_gbps", *d.groups.front().bus_gbps, "GB/s", d.link_gbps));
  f.recommendation =
      "Overlap the collectives with the backward pass (DDP bucket_cap_mb, static_graph, "
      "gradient_as_bucket_view; FSDP prefetch); with little compute to hide them behind, accumulate gradients "
      "over several micro-batches under no_sync() so that fewer all-reduces run.";
  return f;
}

extern const Rule exposed_communication_rule = {
    .id = "exposed-communication",
    .category = Category::kCommunication,
    .ranks = exposed_communication,
    .meaning = "Collective communication (NCCL/gloo) that no compute overlaps lengthens every step.",
    .detection =
        "From per-rank traces: the time inside collectives during which no compute kernel runs on the rank's "
        "GPU, minus the time spent waiting for late ranks, 5% of the step or more on the median rank; by "
        "collective and message size, with the achieved bus bandwidth against the link where known.",
    .action =
        "Overlap (DDP buckets, FSDP prefetch), or all-reduce less often (gradient accumulation under "
        "no_sync()). Remedies overlap-communication and accumulate-no-sync.",
};

}  // namespace chokepoint::rules
