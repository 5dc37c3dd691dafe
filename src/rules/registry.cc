#include "rules/rule.h"

namespace chokepoint::rules {

const std::vector<RuleInfo>& all_rules() {
  static const std::vector<RuleInfo> kRules = {
      {"input-pipeline-stall", Category::kInput, input_pipeline_stall},
      {"launch-overhead", Category::kHost, launch_overhead},
      {"host-sync", Category::kSync, host_sync},
      {"host-work", Category::kHost, host_work},
      {"allocator-churn", Category::kHost, allocator_churn},
      {"pageable-memcpy", Category::kTransfer, pageable_memcpy},
      {"transfer-bound", Category::kTransfer, transfer_bound},
      {"no-tensor-cores", Category::kCompute, no_tensor_cores},
      {"memory-bound-elementwise", Category::kMemory, memory_bound_elementwise},
      {"low-occupancy", Category::kCompute, low_occupancy},
  };
  return kRules;
}

// A finding that costs a quarter of the step, or whose fix promises 1.5x, is the thing to
// fix first; 5% / 1.1x is worth a look; below that it is context.
Severity severity_for(double time_share_pct, double speedup) {
  if (time_share_pct >= 25.0 || speedup >= 1.5) return Severity::kCritical;
  if (time_share_pct >= 5.0 || speedup >= 1.1) return Severity::kWarning;
  return Severity::kInfo;
}

Evidence evidence(std::string metric, double value, std::string unit, std::optional<double> threshold) {
  return Evidence{std::move(metric), value, threshold, std::move(unit)};
}

}  // namespace chokepoint::rules
