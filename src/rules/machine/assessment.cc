#include "rules/machine/checks.h"

#include <algorithm>

namespace chokepoint::rules {

std::string_view verdict_of(const Assessment& a) {
  switch (a.outcome) {
    case Assessment::Outcome::kPass: return "ok";
    case Assessment::Outcome::kSkipped: return "skip";
    case Assessment::Outcome::kFinding: return severity_name(a.severity);
  }
  return "skip";
}

int exit_code_for(const std::vector<Assessment>& all) {
  for (const auto& a : all) {
    if (a.outcome == Assessment::Outcome::kFinding && a.severity == Severity::kCritical) return 1;
  }
  return 0;
}

namespace machine {

namespace {

template <Assessment (*Check)(const doctor::GpuFacts&, const doctor::NvmlFacts&)>
std::vector<Assessment> each_gpu(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const auto& g : m.nvml.gpus) {
    if (g.handle_error == 0) out.push_back(Check(g, m.nvml));
  }
  return out;
}

}  // namespace

std::vector<Assessment> nvidia_driver(const MachineEvidence& m) { return {check_nvidia_driver(m.nvml)}; }
std::vector<Assessment> cuda_compat(const MachineEvidence& m) {
  // Without a driver nvidia-driver says so once: the CUDA comparison would only repeat it.
  if (!m.nvml.available) return {};
  return {check_cuda_compat(m.nvml, m.host)};
}
std::vector<Assessment> gpu_access(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const auto& g : m.nvml.gpus) {
    if (g.handle_error != 0) out.push_back(check_gpu_access(g, m.nvml));
  }
  return out;
}
std::vector<Assessment> pcie_link_degraded(const MachineEvidence& m) { return each_gpu<check_pcie_link>(m); }
std::vector<Assessment> persistence_mode(const MachineEvidence& m) { return each_gpu<check_persistence_mode>(m); }
std::vector<Assessment> clock_throttled(const MachineEvidence& m) { return each_gpu<check_clocks>(m); }
std::vector<Assessment> memory_errors(const MachineEvidence& m) { return each_gpu<check_memory_errors>(m); }
std::vector<Assessment> gpu_shared(const MachineEvidence& m) { return each_gpu<check_other_processes>(m); }
std::vector<Assessment> numa_mismatch(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const auto& g : m.nvml.gpus) {
    if (g.handle_error == 0) out.push_back(check_numa_affinity(g, m.host));
  }
  return out;
}
std::vector<Assessment> gpm_metrics(const MachineEvidence& m) { return each_gpu<check_gpm>(m); }
std::vector<Assessment> cpu_governor(const MachineEvidence& m) { return {check_cpu_governor(m.host)}; }
std::vector<Assessment> host_swapping(const MachineEvidence& m) { return {check_swap(m.host)}; }
std::vector<Assessment> transparent_hugepages(const MachineEvidence& m) {
  return {check_transparent_hugepages(m.host)};
}
std::vector<Assessment> memlock(const MachineEvidence& m) { return {check_memlock(m.host)}; }
std::vector<Assessment> dev_shm(const MachineEvidence& m) { return {check_dev_shm(m.host)}; }

Assessment pass(const char* id, const char* title, Assessment::Scope scope, int gpu) {
  Assessment a;
  a.id = id;
  a.title = title;
  a.gpu = gpu;
  a.scope = scope;
  a.outcome = Assessment::Outcome::kPass;
  return a;
}

Assessment skipped(Assessment a, std::string why) {
  a.outcome = Assessment::Outcome::kSkipped;
  a.observed = std::move(why);
  return a;
}

void raise(Assessment& a, Severity s, const std::string& advice) {
  if (a.outcome != Assessment::Outcome::kFinding) {
    a.outcome = Assessment::Outcome::kFinding;
    a.severity = s;
  } else {
    a.severity = std::max(a.severity, s);
  }
  if (!advice.empty()) a.advice += (a.advice.empty() ? "" : " ") + advice;
}

}  // namespace machine
}  // namespace chokepoint::rules
