#include "doctor/tracer_facts.h"

#include <cstdlib>
#include <filesystem>

namespace chokepoint::doctor {

TracerFacts collect_tracer_facts(const std::string& torch_site_packages) {
  TracerFacts f;
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"); other != nullptr && *other != '\0') {
    f.other_injection = other;
  }
  f.library = tracer::find_tracer_library();
  if (f.library.empty()) return f;
  f.probe = tracer::probe_tracer(f.library);
  if (f.probe.loads || f.probe.cupti_soname.empty()) return f;
  const char* path = std::getenv("PATH");
  std::vector<std::string> dirs = tracer::site_packages_of(
      tracer::python_of_command({"python3"}, path != nullptr ? path : ""));
  if (!torch_site_packages.empty()) dirs.insert(dirs.begin(), torch_site_packages);
  f.wheel_cupti = tracer::find_wheel_cupti(dirs, f.probe.cupti_soname);
  if (!f.wheel_cupti.empty()) f.wheel_loads = tracer::probe_tracer(f.library, f.wheel_cupti).loads;
  return f;
}

}  // namespace chokepoint::doctor
