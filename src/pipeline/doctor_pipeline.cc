#include "pipeline/doctor_pipeline.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "rules/diagnose.h"

namespace chokepoint::pipeline {

report::DoctorReport run_doctor(const DoctorOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  report::DoctorReport r;
  r.host = doctor::collect_host_facts(options.host);
  if (options.probe_tracer) {
    const std::string torch_site = r.host.torch ? std::filesystem::path(r.host.torch->path).parent_path().string() : "";
    r.host.tracer = doctor::collect_tracer_facts(torch_site);
  }
  r.nvml = doctor::collect_nvml_facts(options.nvml, options.host);
  r.checks = rules::assess_machine(rules::MachineEvidence{r.host, r.nvml});
  // Shown by subject: the driver, each GPU, the host; rule order within each.
  std::stable_sort(r.checks.begin(), r.checks.end(), [](const rules::Assessment& a, const rules::Assessment& b) {
    return std::pair(a.scope, a.gpu) < std::pair(b.scope, b.gpu);
  });
  r.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace chokepoint::pipeline
