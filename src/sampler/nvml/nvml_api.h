// The table of NVML entry points resolved from the loaded library. Each slot lists its
// candidate symbol names newest first: a driver exports the old names next to the new
// ones for compatibility, and only the newest carries today's semantics (nvmlInit_v2
// counts GPUs it cannot access; _v3 process lists fill MIG ids ...). Only the four
// slots needed to enumerate devices are required; every other slot may stay null.
#pragma once

#include <string>
#include <vector>

#include "sampler/nvml/nvml_abi.h"

namespace chokepoint::nvml {

struct Api {
  // Required.
  abi::InitFn init = nullptr;
  abi::ShutdownFn shutdown = nullptr;
  abi::DeviceGetCountFn device_get_count = nullptr;
  abi::DeviceGetHandleByIndexFn device_get_handle_by_index = nullptr;
  // System.
  abi::ErrorStringFn error_string = nullptr;
  abi::SystemGetStringFn system_get_driver_version = nullptr;
  abi::SystemGetStringFn system_get_nvml_version = nullptr;
  abi::SystemGetCudaDriverVersionFn system_get_cuda_driver_version = nullptr;
  // Identity.
  abi::DeviceGetStringFn device_get_name = nullptr;
  abi::DeviceGetStringFn device_get_uuid = nullptr;
  abi::DeviceGetPciInfoFn device_get_pci_info = nullptr;
  abi::DeviceGetComputeCapabilityFn device_get_cuda_compute_capability = nullptr;
  // Memory.
  abi::DeviceGetMemoryV2Fn device_get_memory_info_v2 = nullptr;
  abi::DeviceGetMemoryV1Fn device_get_memory_info_v1 = nullptr;
  // PCIe.
  abi::DeviceGetUintFn device_get_curr_pcie_link_generation = nullptr;
  abi::DeviceGetUintFn device_get_max_pcie_link_generation = nullptr;
  abi::DeviceGetUintFn device_get_gpu_max_pcie_link_generation = nullptr;
  abi::DeviceGetUintFn device_get_curr_pcie_link_width = nullptr;
  abi::DeviceGetUintFn device_get_max_pcie_link_width = nullptr;
  abi::DeviceGetUintByTypeFn device_get_pcie_throughput = nullptr;
  abi::DeviceGetUintFn device_get_pcie_replay_counter = nullptr;
  // Clocks, power, thermals.
  abi::DeviceGetUintByTypeFn device_get_clock_info = nullptr;
  abi::DeviceGetUintByTypeFn device_get_max_clock_info = nullptr;
  abi::DeviceGetUllFn device_get_current_clocks_event_reasons = nullptr;
  abi::DeviceGetIntFn device_get_performance_state = nullptr;
  abi::DeviceGetUintFn device_get_power_usage = nullptr;
  abi::DeviceGetUintFn device_get_enforced_power_limit = nullptr;
  abi::DeviceGetUintFn device_get_power_management_default_limit = nullptr;
  abi::DeviceGetTemperatureVFn device_get_temperature_v = nullptr;
  abi::DeviceGetUintByTypeFn device_get_temperature = nullptr;
  // Modes and health.
  abi::DeviceGetIntFn device_get_persistence_mode = nullptr;
  abi::DeviceGetEccModeFn device_get_ecc_mode = nullptr;
  abi::DeviceGetTotalEccErrorsFn device_get_total_ecc_errors = nullptr;
  abi::DeviceGetRetiredPagesV2Fn device_get_retired_pages_v2 = nullptr;
  abi::DeviceGetRetiredPagesFn device_get_retired_pages = nullptr;
  abi::DeviceGetIntFn device_get_retired_pages_pending_status = nullptr;
  abi::DeviceGetRemappedRowsFn device_get_remapped_rows = nullptr;
  // Activity.
  abi::DeviceGetProcessesV2Fn device_get_compute_running_processes_v2 = nullptr;  // _v3 or _v2
  abi::DeviceGetProcessesV1Fn device_get_compute_running_processes_v1 = nullptr;
  abi::DeviceGetUtilizationFn device_get_utilization_rates = nullptr;
  // Topology.
  abi::DeviceGetCpuAffinityFn device_get_cpu_affinity = nullptr;
  abi::DeviceGetUintFn device_get_numa_node_id = nullptr;
  // GPM (Hopper+).
  abi::GpmQueryDeviceSupportFn gpm_query_device_support = nullptr;
  abi::GpmSampleAllocFn gpm_sample_alloc = nullptr;
  abi::GpmSampleFreeFn gpm_sample_free = nullptr;
  abi::GpmSampleGetFn gpm_sample_get = nullptr;
  abi::GpmMetricsGetFn gpm_metrics_get = nullptr;
};

// How one slot was resolved: for --dump-nvml and the loader tests.
struct SymbolBinding {
  std::string slot;      // e.g. "device_get_memory_info_v2"
  std::string resolved;  // the exported name it bound to; empty when missing
  std::vector<std::string> candidates;
  bool required = false;
};

// Resolves every slot of `api` from the dlopen handle. Returns one binding per slot;
// never fails: the caller decides what a missing required slot means.
std::vector<SymbolBinding> resolve_api(void* dl_handle, Api* api);

}  // namespace chokepoint::nvml
