// What doctor reads from NVML (and the GPU's sysfs PCI node), collected once. Every
// reading keeps its validity bit and NVML code, so a check can say "not supported by
// this GPU" instead of judging a zero.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/host_facts.h"
#include "sampler/nvml/nvml.h"

namespace chokepoint::doctor {

struct GpuProcess {
  unsigned pid = 0;
  std::optional<uint64_t> used_bytes;
  std::string command;  // /proc/PID/comm; empty when the PID is not visible here
};

struct GpuFacts {
  unsigned index = 0;
  int handle_error = 0;  // nonzero: NVML could not open this GPU; nothing else is valid
  nvml::Value<std::string> name;
  nvml::Value<std::string> uuid;
  nvml::Value<nvml::PciInfo> pci;
  nvml::Value<nvml::MemoryInfo> memory;
  nvml::Value<unsigned> link_gen, link_gen_max, link_gen_gpu_max, link_width, link_width_max;
  nvml::Value<unsigned> sm_clock, sm_clock_max, mem_clock, mem_clock_max;
  nvml::Value<uint64_t> clock_reasons;
  nvml::Value<int> pstate;
  nvml::Value<unsigned> power_mw, power_limit_mw, power_default_limit_mw;
  nvml::Value<int> temperature_c;
  nvml::Value<nvml::Utilization> utilization;
  nvml::Value<bool> persistence;
  nvml::Value<nvml::EccMode> ecc_mode;
  nvml::Value<uint64_t> ecc_volatile_uncorrected, ecc_aggregate_uncorrected;
  nvml::Value<unsigned> retired_sbe, retired_dbe;
  nvml::Value<bool> retired_pending;
  nvml::Value<nvml::RemappedRows> remapped;
  nvml::Value<std::vector<GpuProcess>> processes;
  nvml::Value<std::vector<unsigned>> nvml_cpu_affinity;
  PciNuma sysfs;  // numa_node and local_cpulist of the GPU's PCI function
  nvml::Value<bool> gpm_supported;
};

struct NvmlFacts {
  bool available = false;
  std::string error;    // why NVML is unavailable
  std::string library;  // the file that was loaded
  nvml::Value<std::string> driver_version;
  nvml::Value<std::string> nvml_version;
  nvml::Value<int> cuda_driver_version;
  nvml::Value<unsigned> device_count;
  std::vector<GpuFacts> gpus;
  std::map<int, std::string> error_text;  // NVML code -> nvmlErrorString, for every code seen
};

// Opens NVML (options as nvml::Nvml::open) and reads every GPU. Never fails: an
// unavailable NVML gives available = false and the reason.
NvmlFacts collect_nvml_facts(const nvml::OpenOptions& options, const machine::HostInputs& host);

// "not supported (Not Supported)" style text for an invalid reading.
std::string describe_error(const NvmlFacts& facts, int code);

}  // namespace chokepoint::doctor
