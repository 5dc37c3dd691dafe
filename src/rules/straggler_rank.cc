// straggler-rank: one rank of a distributed job is consistently late at the collectives,
// and the others wait for it (analyses/distributed/cross_rank.h finds it and says why).
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {

std::optional<Finding> straggler_rank(const RankEvidence& c) {
  const auto& d = c.d;
  if (!d.straggler || d.step_ms <= 0) return std::nullopt;
  const auto& s = *d.straggler;
  const double share = 100 * s.extra_ms / d.step_ms;
  Finding f = new_finding(share, what_if(c, analyses::whatif::Remedy::kFixStraggler));
  f.remedies = {"fix-straggler"};
  const char* why = s.cause == "input"     ? "it waits longer for its data"
                    : s.cause == "host"    ? "its host (Python, launches, syncs) takes longer"
                    : s.cause == "compute" ? "its GPU computes longer"
                    : s.cause == "clocks"  ? "its GPU runs at lower clocks"
                                           : "its trace does not show why";
  f.title = fmt::format(
      "Rank {} is the straggler: the other ranks wait {:.2f} ms per step for it ({:.0f}% of the step)", s.rank,
      s.extra_ms, share);
  f.detail = fmt::format(
      "Rank {} arrives last at {:.0f}% of {} collectives matched across {} ranks; {} ({}). The arrival skew "
      "at a collective is {:.2f} ms at the median, {:.2f} ms at p95.",
      s.rank, 100 * s.last_share, d.matched_collectives, d.ranks.size(), why, s.detail, d.skew_p50_ms, d.skew_p95_ms);
  f.evidence = {
      evidence("straggler_last_share_pct", 100 * s.last_share, "%", 100 * analyses::distributed::kStragglerLastShare),
      evidence("others_wait_ms_per_step", s.extra_ms, "ms", analyses::distributed::kStragglerMinWaitShare * d.step_ms),
      evidence("collective_skew_p50_ms", d.skew_p50_ms, "ms")};
  if (s.cause_ms > 0) f.evidence.push_back(evidence("straggler_excess_" + s.cause + "_ms", s.cause_ms, "ms"));
  f.recommendation = s.cause == "input" ? fmt::format(
                                              "Rank {} waits for data: more DataLoader workers on its node, the same "
                                              "shard sizes and sample lengths on every rank (bucket by length), local "
                                              "copies of the data.",
                                              s.rank)
                     : s.cause == "host" ? fmt::format(
                                               "Rank {}'s host does extra work each step: move logging, "
                                               "metrics and checkpointing off the critical path or spread "
                                               "them over all ranks; check its CPU binding and neighbours.",
                                               s.rank)
                     : s.cause == "compute" ? fmt::format(
                                                  "Rank {} has more to compute: balance the work (the same "
                                                  "sequence lengths / batch shapes per rank, pipeline stages "
                                                  "of equal cost).",
                                                  s.rank)
                     : s.cause == "clocks" ? fmt::format(
                                                 "Rank {}'s GPU runs slower: check its clocks, power and "
                                                 "temperature (chokepoint doctor on its node).",
                                                 s.rank)
                                           : fmt::format("Profile rank {} on its own to see what delays it.", s.rank);
  return f;
}

extern const Rule straggler_rank_rule = {
    .id = "straggler-rank",
    .category = Category::kCommunication,
    .ranks = straggler_rank,
    .meaning = "One rank of a distributed job is consistently late at the collectives; the others wait for it.",
    .detection =
        "From per-rank traces: collectives matched across ranks by step and order; a rank that arrives last at "
        "half of them or more while the others wait 5% of the step or more. Why: its excess over the other "
        "ranks' median in data loading, host work, GPU compute, or its GPU's clocks.",
    .action =
        "Fix the straggler's own bottleneck (its input, host work or GPU); balance the work per rank. Remedy "
        "fix-straggler; its what-if removes the others' wait.",
};

}  // namespace chokepoint::rules
