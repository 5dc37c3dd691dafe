// Renders what `chokepoint doctor` found: text for people (grouped by system / GPU / host,
// advice under each problem), JSON for tools ("chokepoint.doctor/2": stable keys, nulls
// never zeros; each check's status is ok, skip, or the severity of the finding).
#pragma once

#include <string>
#include <vector>

#include "doctor/gpu_facts.h"
#include "doctor/host_facts.h"
#include "report/formats.h"
#include "report/style.h"
#include "rules/machine_evidence.h"

namespace chokepoint::report {

// /2: statuses are the engine's severities ("warning", "critical" where /1 said "warn",
// "fail") and ids are the engine's rule ids (pcie-link-degraded, clock-throttled,
// gpu-shared, numa-mismatch, host-swapping).
inline constexpr const char* kDoctorSchema = "chokepoint.doctor/2";

struct DoctorReport {
  doctor::NvmlFacts nvml;
  doctor::HostFacts host;
  std::vector<rules::Assessment> checks;  // the driver's, then per GPU, then the host's
  double elapsed_ms = 0;
};

std::string render_doctor_text(const DoctorReport& report, const RenderOptions& options);
std::string render_doctor_json(const DoctorReport& report);
// One of kDoctorFormats: the text or the JSON above.
std::string render_doctor(const DoctorReport& report, Format format, const RenderOptions& options);

}  // namespace chokepoint::report
