// Will `run --trace` work on this machine (rule trace-ready): the tracer library next to
// chokepoint, whether it loads with a libcupti, one from the Python environment's
// nvidia-cuda-cupti wheel when the build's is missing, and another tool's injection.
#pragma once

#include <optional>
#include <string>

#include "tracer/setup.h"

namespace chokepoint::doctor {

struct TracerFacts {
  std::string library;        // "" when this build has none
  tracer::TracerProbe probe;  // loading it as the build left it
  // When that failed: the libcupti of the Python environment (python3 on PATH, or the
  // one torch was found in) and whether the library loads with it.
  std::string wheel_cupti;
  bool wheel_loads = false;
  std::string other_injection;  // CUDA_INJECTION64_PATH already set to another library
};

// Probes this machine; `torch_site_packages` (doctor's TorchInstall, its parent folder)
// is searched for a wheel's libcupti too.
TracerFacts collect_tracer_facts(const std::string& torch_site_packages = "");

}  // namespace chokepoint::doctor
