// Rules: one file per rule, each a function from the analyses to an optional Finding;
// registry.cc lists them (DESIGN.md convention 5). Thresholds are named constants in the
// rule's file with a comment saying where the number comes from.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analyses/analysis.h"
#include "analyses/live/live_analysis.h"
#include "rules/finding.h"
#include "timeline/model.h"

namespace chokepoint::rules {

using timeline::TimeNs;

struct RuleContext {
  const timeline::Timeline& tl;
  const analyses::Analysis& a;
};

using RuleFn = std::optional<Finding> (*)(const RuleContext&);

// A live recording (`run` / `watch`): the samples and their summaries.
struct SampleRuleContext {
  const samples::Recording& rec;
  const analyses::live::LiveAnalysis& la;
};

using SampleRuleFn = std::optional<Finding> (*)(const SampleRuleContext&);

// One rule id, evaluated on whichever sources it can read: a trace (evaluate) and/or
// live samples (evaluate_samples). Same id, same category, same file.
struct RuleInfo {
  std::string_view id;
  Category category;
  RuleFn evaluate = nullptr;
  SampleRuleFn evaluate_samples = nullptr;
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

// The sample rules (live recordings): input_pipeline_stall.cc and rules/live/.
std::optional<Finding> input_pipeline_stall_samples(const SampleRuleContext& c);
std::optional<Finding> launch_overhead_samples(const SampleRuleContext& c);
std::optional<Finding> pageable_memcpy_samples(const SampleRuleContext& c);
std::optional<Finding> smi_util_misleading(const SampleRuleContext& c);
std::optional<Finding> pcie_saturated(const SampleRuleContext& c);
std::optional<Finding> pcie_link_degraded(const SampleRuleContext& c);
std::optional<Finding> clock_throttled(const SampleRuleContext& c);
std::optional<Finding> gpu_memory_near_full(const SampleRuleContext& c);
std::optional<Finding> host_swapping(const SampleRuleContext& c);
std::optional<Finding> cpu_oversubscribed(const SampleRuleContext& c);
std::optional<Finding> gil_contention(const SampleRuleContext& c);
std::optional<Finding> io_wait(const SampleRuleContext& c);
std::optional<Finding> cpu_steal(const SampleRuleContext& c);
std::optional<Finding> numa_mismatch(const SampleRuleContext& c);

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
