// trace-ready: will `chokepoint run --trace` work on this machine (doctor only; run and
// analyze never see these facts). The tracer library must exist, load with a libcupti
// (the build's toolkit, or the job's nvidia-cuda-cupti wheel), that CUPTI must not be
// newer than the driver, and no other tool may hold CUDA's injection slot.
#include <string>

#include "rules/checks/checks.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace checks {

using namespace doctor;

Assessment check_trace_ready(const HostFacts& h, const NvmlFacts& n) {
  Assessment c = pass("trace-ready", "run --trace (CUPTI tracer)", Assessment::Scope::kSystem);
  c.expected = "libchokepoint_tracer.so loads with a CUPTI the driver runs";
  if (!h.tracer) return skipped(c, "not checked for a captured host");
  const TracerFacts& t = *h.tracer;
  if (t.library.empty()) {
    c.observed = "no libchokepoint_tracer.so next to chokepoint (nor $CHOKEPOINT_TRACER_LIB)";
    raise(c, Severity::kWarning,
          "This build found no CUDA toolkit with CUPTI: install the toolkit and build again (bash "
          "scripts/build.sh), or set CHOKEPOINT_TRACER_LIB to a built library. run and analyze work without it.");
    return c;
  }
  const bool loads = t.probe.loads || t.wheel_loads;
  if (!loads) {
    const std::string need = t.probe.cupti_soname.empty() ? "its CUPTI library" : t.probe.cupti_soname;
    c.observed = t.library + " does not load: " + t.probe.error;
    raise(c, Severity::kWarning,
          "It needs " + need +
              ": install the CUDA toolkit of that version, or `pip install nvidia-cuda-cupti` (CUDA 13) in the "
              "job's Python environment, where run --trace looks for it.");
    return c;
  }
  const std::string cupti = t.probe.loads ? t.probe.cupti_path : t.wheel_cupti;
  const int major = tracer::cupti_major_of(cupti);
  c.observed = "loads with " + cupti + (t.probe.loads ? "" : " (the Python environment's wheel)");
  if (t.probe.cupti_api_version > 0) c.observed += ", CUPTI API " + std::to_string(t.probe.cupti_api_version);
  if (n.available && n.cuda_driver_version.valid && major > 0 && *n.cuda_driver_version / 1000 < major) {
    c.observed += "; the driver runs CUDA up to " + std::to_string(*n.cuda_driver_version / 1000) + "." +
                  std::to_string(*n.cuda_driver_version % 1000 / 10);
    raise(c, Severity::kWarning,
          "CUPTI " + std::to_string(major) + " needs a driver for CUDA " + std::to_string(major) +
              ": update the driver, or build the tracer with the toolkit the driver supports.");
  }
  if (!t.other_injection.empty()) {
    c.observed += "; CUDA_INJECTION64_PATH is set to " + t.other_injection;
    raise(c, Severity::kWarning,
          "Another tool injects into CUDA here: run --trace leaves it in place and records no trace. Unset it for "
          "the traced run.");
  }
  return c;
}

// Nothing to trace without a driver: nvidia-driver says that once.
std::vector<Assessment> trace_ready(const MachineEvidence& m) {
  if (!m.nvml.available) return {};
  return {check_trace_ready(m.host, m.nvml)};
}

}  // namespace checks

// The rule (listed in registry.cc); its texts are what `chokepoint explain trace-ready` prints.
extern const Rule trace_ready_rule = {
    .id = "trace-ready",
    .category = Category::kUnknown,
    .machine = checks::trace_ready,
    .meaning =
        "`run --trace` cannot trace here: the CUPTI tracer library is missing, cannot load its "
        "libcupti, needs a newer driver, or another tool holds CUDA's injection slot.",
    .detection =
        "doctor: loads libchokepoint_tracer.so in a child process (with the build's libcupti, else the "
        "nvidia-cuda-cupti wheel of the Python environment), the CUPTI version against the driver's "
        "CUDA version, and CUDA_INJECTION64_PATH.",
    .action =
        "Build with the CUDA toolkit (bash scripts/build.sh), or pip install nvidia-cuda-cupti in the "
        "job's environment; update the driver to the CUPTI's CUDA version; unset another tool's "
        "CUDA_INJECTION64_PATH for the traced run.",
};

}  // namespace chokepoint::rules
