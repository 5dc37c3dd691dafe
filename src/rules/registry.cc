#include "rules/rule.h"

namespace chokepoint::rules {

// The registry: one line per rule, in report order. Each rule is a descriptor defined in
// its own file (`extern const Rule NAME_rule = {...}`) with its id, category, evaluators
// and glossary texts; adding a rule is that file plus one line here.
#define CHOKEPOINT_RULES(X)   \
  X(input_pipeline_stall)     \
  X(launch_overhead)          \
  X(host_sync)                \
  X(host_work)                \
  X(allocator_churn)          \
  X(unfused_optimizer)        \
  X(pageable_memcpy)          \
  X(transfer_bound)           \
  X(no_tensor_cores)          \
  X(memory_bound_elementwise) \
  X(memory_bound_matmul)      \
  X(nchw_layout)              \
  X(low_occupancy)            \
  X(straggler_rank)           \
  X(exposed_communication)    \
  X(smi_util_misleading)      \
  X(pcie_saturated)           \
  X(pcie_link_degraded)       \
  X(clock_throttled)          \
  X(gpu_memory_near_full)     \
  X(host_swapping)            \
  X(cpu_oversubscribed)       \
  X(gil_contention)           \
  X(io_wait)                  \
  X(cpu_steal)                \
  X(numa_mismatch)            \
  X(nvidia_driver)            \
  X(cuda_compat)              \
  X(gpu_access)               \
  X(persistence_mode)         \
  X(memory_errors)            \
  X(gpu_shared)               \
  X(gpm_metrics)              \
  X(cpu_governor)             \
  X(transparent_hugepages)    \
  X(memlock)                  \
  X(dev_shm)                  \
  X(trace_ready)              \
  X(profiler_attached)        \
  X(launch_blocking)          \
  X(io_virtualization)

#define CHOKEPOINT_DECLARE_RULE(name) extern const Rule name##_rule;
CHOKEPOINT_RULES(CHOKEPOINT_DECLARE_RULE)
#undef CHOKEPOINT_DECLARE_RULE

const std::vector<Rule>& all_rules() {
#define CHOKEPOINT_LIST_RULE(name) name##_rule,
  static const std::vector<Rule> kRules = {CHOKEPOINT_RULES(CHOKEPOINT_LIST_RULE)};
#undef CHOKEPOINT_LIST_RULE
  return kRules;
}

const Rule* find_rule(std::string_view id) {
  for (const auto& r : all_rules()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

// Severity follows the gain the fix promises: 1.5x is the thing to fix first, 1.1x is worth
// a look, less is context. Without an estimate (speedup <= 0), the share of step time the
// finding accounts for decides instead: a quarter of the step, or 5%.
Severity severity_for(double time_share_pct, double speedup) {
  if (speedup > 0) {
    if (speedup >= 1.5) return Severity::kCritical;
    if (speedup >= 1.1) return Severity::kWarning;
    return Severity::kInfo;
  }
  if (time_share_pct >= 25.0) return Severity::kCritical;
  if (time_share_pct >= 5.0) return Severity::kWarning;
  return Severity::kInfo;
}

Finding new_finding(double time_share_pct, std::optional<double> estimated_speedup) {
  Finding f;
  f.time_share_pct = time_share_pct;
  f.estimated_speedup = estimated_speedup;
  f.severity = severity_for(time_share_pct, estimated_speedup.value_or(0));
  return f;
}

Evidence evidence(std::string metric, double value, std::string unit, std::optional<double> threshold) {
  return Evidence{std::move(metric), value, threshold, std::move(unit)};
}

Evidence evidence_at_most(std::string metric, double value, std::string unit, double threshold) {
  return Evidence{std::move(metric), value, threshold, std::move(unit), ThresholdSide::kAtMost};
}

Evidence evidence_vs_ceiling(std::string metric, double value, std::string unit, std::optional<double> ceiling) {
  return Evidence{std::move(metric), value, ceiling, std::move(unit), ThresholdSide::kCeiling};
}

std::optional<double> what_if(const TraceEvidence& c, analyses::whatif::Remedy r) {
  const auto* e = analyses::estimate_of(c.a, r);
  return e ? std::optional<double>(e->speedup) : std::nullopt;
}

std::optional<double> what_if(const RankEvidence& c, analyses::whatif::Remedy r) {
  for (const auto& e : c.d.remedies) {
    if (e.remedy == r) return e.speedup;
  }
  return std::nullopt;
}

}  // namespace chokepoint::rules
