#include "doctor/doctor.h"

#include <chrono>

#include "doctor/gpu_checks.h"
#include "doctor/host_checks.h"

namespace chokepoint::doctor {

DoctorReport run_doctor(const DoctorOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  DoctorReport r;
  r.host = collect_host_facts(options.host);
  r.nvml = collect_nvml_facts(options.nvml, options.host);
  for (auto& c : driver_checks(r.nvml, r.host)) r.checks.push_back(std::move(c));
  for (const auto& g : r.nvml.gpus) {
    for (auto& c : gpu_checks(g, r.nvml, r.host)) r.checks.push_back(std::move(c));
  }
  for (auto& c : host_checks(r.host)) r.checks.push_back(std::move(c));
  r.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace chokepoint::doctor
