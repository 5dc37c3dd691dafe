#include "rules/rule.h"

#include "rules/machine/checks.h"

namespace chokepoint::rules {

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> kRules = {
      // id, category, trace evaluator, sample evaluator, machine evaluator, stack evaluator
      {"input-pipeline-stall", Category::kInput, input_pipeline_stall, input_pipeline_stall_samples, nullptr,
       input_pipeline_stall_stacks},
      {"launch-overhead", Category::kHost, launch_overhead, launch_overhead_samples},
      {"host-sync", Category::kSync, host_sync, nullptr, nullptr, host_sync_stacks},
      {"host-work", Category::kHost, host_work, host_work_samples, nullptr, host_work_stacks},
      {"allocator-churn", Category::kHost, allocator_churn},
      {"unfused-optimizer", Category::kHost, unfused_optimizer},
      {"pageable-memcpy", Category::kTransfer, pageable_memcpy, pageable_memcpy_samples},
      {"transfer-bound", Category::kTransfer, transfer_bound},
      {"no-tensor-cores", Category::kCompute, no_tensor_cores, no_tensor_cores_samples},
      {"memory-bound-elementwise", Category::kMemory, memory_bound_elementwise},
      {"memory-bound-matmul", Category::kMemory, memory_bound_matmul},
      {"nchw-layout", Category::kMemory, nchw_layout},
      {"low-occupancy", Category::kCompute, low_occupancy},
      // Live samples only (rules/live/).
      {"smi-util-misleading", Category::kCompute, nullptr, smi_util_misleading},
      {"pcie-saturated", Category::kTransfer, nullptr, pcie_saturated},
      {"pcie-link-degraded", Category::kTransfer, nullptr, pcie_link_degraded, machine::pcie_link_degraded},
      {"clock-throttled", Category::kCompute, nullptr, clock_throttled, machine::clock_throttled},
      {"gpu-memory-near-full", Category::kMemory, nullptr, gpu_memory_near_full},
      {"host-swapping", Category::kIo, nullptr, host_swapping, machine::host_swapping},
      {"cpu-oversubscribed", Category::kHost, nullptr, cpu_oversubscribed},
      {"gil-contention", Category::kHost, nullptr, gil_contention, nullptr, gil_contention_stacks},
      {"io-wait", Category::kIo, nullptr, io_wait},
      {"cpu-steal", Category::kHost, nullptr, cpu_steal},
      {"numa-mismatch", Category::kHost, nullptr, numa_mismatch, machine::numa_mismatch},
      // Static machine facts only (rules/machine/): what `doctor` checks.
      {"nvidia-driver", Category::kCompute, nullptr, nullptr, machine::nvidia_driver},
      {"cuda-compat", Category::kCompute, nullptr, nullptr, machine::cuda_compat},
      {"gpu-access", Category::kCompute, nullptr, nullptr, machine::gpu_access},
      {"persistence-mode", Category::kCompute, nullptr, nullptr, machine::persistence_mode},
      {"memory-errors", Category::kMemory, nullptr, nullptr, machine::memory_errors},
      {"gpu-shared", Category::kMemory, nullptr, nullptr, machine::gpu_shared},
      {"gpm-metrics", Category::kCompute, nullptr, nullptr, machine::gpm_metrics},
      {"cpu-governor", Category::kHost, nullptr, nullptr, machine::cpu_governor},
      {"transparent-hugepages", Category::kHost, nullptr, nullptr, machine::transparent_hugepages},
      {"memlock", Category::kCommunication, nullptr, nullptr, machine::memlock},
      {"dev-shm", Category::kInput, nullptr, nullptr, machine::dev_shm},
  };
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

Finding new_finding(std::string id, Category category, double time_share_pct, std::optional<double> estimated_speedup) {
  Finding f;
  f.id = std::move(id);
  f.category = category;
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

}  // namespace chokepoint::rules
