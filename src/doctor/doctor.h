// `chokepoint doctor`: static checks of the driver, each GPU and the host, in well under
// two seconds (no sampling windows, no CUDA context). The CLI renders the report.
#pragma once

#include <vector>

#include "doctor/check.h"
#include "doctor/gpu_facts.h"
#include "doctor/host_facts.h"
#include "doctor/host_inputs.h"
#include "sampler/nvml/nvml.h"

namespace chokepoint::doctor {

struct DoctorOptions {
  nvml::OpenOptions nvml;
  HostInputs host = live_host_inputs();
};

struct DoctorReport {
  NvmlFacts nvml;
  HostFacts host;
  std::vector<Check> checks;  // driver checks, then per GPU, then host
  double elapsed_ms = 0;
};

DoctorReport run_doctor(const DoctorOptions& options);

}  // namespace chokepoint::doctor
