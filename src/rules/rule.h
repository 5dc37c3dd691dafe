// Rules: one file per rule, each a function from the analyses to an optional Finding;
// registry.cc lists them (DESIGN.md convention 5). Thresholds are named constants in the
// rule's file with a comment saying where the number comes from.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analyses/analysis.h"
#include "rules/finding.h"
#include "timeline/model.h"

namespace chokepoint::rules {

using timeline::TimeNs;

struct RuleContext {
  const timeline::Timeline& tl;
  const analyses::Analysis& a;
};

using RuleFn = std::optional<Finding> (*)(const RuleContext&);

struct RuleInfo {
  std::string_view id;
  Category category;
  RuleFn evaluate;
};

// Every rule, in a fixed order.
const std::vector<RuleInfo>& all_rules();

// The rules (one per file).
std::optional<Finding> input_pipeline_stall(const RuleContext& c);
std::optional<Finding> launch_overhead(const RuleContext& c);
std::optional<Finding> host_sync(const RuleContext& c);
std::optional<Finding> host_work(const RuleContext& c);
std::optional<Finding> allocator_churn(const RuleContext& c);
std::optional<Finding> pageable_memcpy(const RuleContext& c);
std::optional<Finding> transfer_bound(const RuleContext& c);
std::optional<Finding> no_tensor_cores(const RuleContext& c);
std::optional<Finding> memory_bound_elementwise(const RuleContext& c);
std::optional<Finding> low_occupancy(const RuleContext& c);

// Shared by rules: severity from the speedup its fix promises (pass 0 when unknown) or,
// without one, from the share of step time the finding accounts for.
Severity severity_for(double time_share_pct, double speedup);
// A finding with id, category, share, estimate and the severity they imply; the rule
// then fills title, detail, evidence and recommendation.
Finding new_finding(std::string id, Category category, double time_share_pct,
                    std::optional<double> estimated_speedup);
Evidence evidence(std::string metric, double value, std::string unit,
                  std::optional<double> threshold = std::nullopt);

}  // namespace chokepoint::rules
