// `chokepoint doctor`: collect the machine's static facts (the driver and each GPU over
// NVML, the host's /proc and /sys; doctor/) and assess them with the machine rules of the
// one engine (rules/checks/), in well under two seconds (no sampling windows, no CUDA
// context). The CLI renders the report (report/doctor_render.h).
#pragma once

#include "machine/host_inputs.h"
#include "report/doctor_render.h"
#include "sampler/nvml/nvml.h"

namespace chokepoint::pipeline {

struct DoctorOptions {
  nvml::OpenOptions nvml;
  machine::HostInputs host = machine::live_host_inputs();
  // Whether `run --trace` will work here (rule trace-ready); unset for a captured host.
  bool probe_tracer = true;
};

report::DoctorReport run_doctor(const DoctorOptions& options);

}  // namespace chokepoint::pipeline
