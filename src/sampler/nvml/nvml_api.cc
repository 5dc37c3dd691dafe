#include "sampler/nvml/nvml_api.h"

#include <dlfcn.h>

#include <cstring>
#include <initializer_list>

namespace chokepoint::nvml {
namespace {

class Resolver {
 public:
  explicit Resolver(void* handle) : handle_(handle) {}

  // Binds `slot` to the first of `names` the library exports (newest first).
  template <typename Fn>
  void bind(Fn& slot, const char* slot_name, std::initializer_list<const char*> names, bool required = false) {
    SymbolBinding b;
    b.slot = slot_name;
    b.required = required;
    for (const char* name : names) b.candidates.emplace_back(name);
    slot = nullptr;
    for (const char* name : names) {
      void* sym = handle_ != nullptr ? dlsym(handle_, name) : nullptr;
      if (sym != nullptr) {
        // POSIX guarantees object and function pointers convert through dlsym's void*.
        static_assert(sizeof(Fn) == sizeof(void*));
        std::memcpy(&slot, &sym, sizeof(sym));
        b.resolved = name;
        break;
      }
    }
    bindings_.push_back(std::move(b));
  }

  std::vector<SymbolBinding> take() { return std::move(bindings_); }

 private:
  void* handle_;
  std::vector<SymbolBinding> bindings_;
};

}  // namespace

std::vector<SymbolBinding> resolve_api(void* dl_handle, Api* api) {
  Resolver r(dl_handle);
  Api& a = *api;
  r.bind(a.init, "init", {"nvmlInit_v2", "nvmlInit"}, true);
  r.bind(a.shutdown, "shutdown", {"nvmlShutdown"}, true);
  r.bind(a.device_get_count, "device_get_count", {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, true);
  r.bind(a.device_get_handle_by_index, "device_get_handle_by_index",
         {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, true);

  r.bind(a.error_string, "error_string", {"nvmlErrorString"});
  r.bind(a.system_get_driver_version, "system_get_driver_version", {"nvmlSystemGetDriverVersion"});
  r.bind(a.system_get_nvml_version, "system_get_nvml_version", {"nvmlSystemGetNVMLVersion"});
  // _v2 asks libcuda (cuDriverGetVersion); the original asks the kernel driver.
  r.bind(a.system_get_cuda_driver_version, "system_get_cuda_driver_version",
         {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});

  r.bind(a.device_get_name, "device_get_name", {"nvmlDeviceGetName"});
  r.bind(a.device_get_uuid, "device_get_uuid", {"nvmlDeviceGetUUID"});
  // v1 of this call filled a shorter busId; v2 and v3 share today's struct.
  r.bind(a.device_get_pci_info, "device_get_pci_info", {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  r.bind(a.device_get_cuda_compute_capability, "device_get_cuda_compute_capability",
         {"nvmlDeviceGetCudaComputeCapability"});

  r.bind(a.device_get_memory_info_v2, "device_get_memory_info_v2", {"nvmlDeviceGetMemoryInfo_v2"});
  r.bind(a.device_get_memory_info_v1, "device_get_memory_info_v1", {"nvmlDeviceGetMemoryInfo"});

  r.bind(a.device_get_curr_pcie_link_generation, "device_get_curr_pcie_link_generation",
         {"nvmlDeviceGetCurrPcieLinkGeneration"});
  r.bind(a.device_get_max_pcie_link_generation, "device_get_max_pcie_link_generation",
         {"nvmlDeviceGetMaxPcieLinkGeneration"});
  r.bind(a.device_get_gpu_max_pcie_link_generation, "device_get_gpu_max_pcie_link_generation",
         {"nvmlDeviceGetGpuMaxPcieLinkGeneration"});
  r.bind(a.device_get_curr_pcie_link_width, "device_get_curr_pcie_link_width", {"nvmlDeviceGetCurrPcieLinkWidth"});
  r.bind(a.device_get_max_pcie_link_width, "device_get_max_pcie_link_width", {"nvmlDeviceGetMaxPcieLinkWidth"});
  r.bind(a.device_get_pcie_throughput, "device_get_pcie_throughput", {"nvmlDeviceGetPcieThroughput"});
  r.bind(a.device_get_pcie_replay_counter, "device_get_pcie_replay_counter", {"nvmlDeviceGetPcieReplayCounter"});

  r.bind(a.device_get_clock_info, "device_get_clock_info", {"nvmlDeviceGetClockInfo"});
  r.bind(a.device_get_max_clock_info, "device_get_max_clock_info", {"nvmlDeviceGetMaxClockInfo"});
  // Renamed in r535 ("throttle" -> "event"); same signature and bits.
  r.bind(a.device_get_current_clocks_event_reasons, "device_get_current_clocks_event_reasons",
         {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  r.bind(a.device_get_performance_state, "device_get_performance_state", {"nvmlDeviceGetPerformanceState"});
  r.bind(a.device_get_power_usage, "device_get_power_usage", {"nvmlDeviceGetPowerUsage"});
  r.bind(a.device_get_enforced_power_limit, "device_get_enforced_power_limit", {"nvmlDeviceGetEnforcedPowerLimit"});
  r.bind(a.device_get_power_management_default_limit, "device_get_power_management_default_limit",
         {"nvmlDeviceGetPowerManagementDefaultLimit"});
  r.bind(a.device_get_temperature_v, "device_get_temperature_v", {"nvmlDeviceGetTemperatureV"});
  r.bind(a.device_get_temperature, "device_get_temperature", {"nvmlDeviceGetTemperature"});

  r.bind(a.device_get_persistence_mode, "device_get_persistence_mode", {"nvmlDeviceGetPersistenceMode"});
  r.bind(a.device_get_ecc_mode, "device_get_ecc_mode", {"nvmlDeviceGetEccMode"});
  r.bind(a.device_get_total_ecc_errors, "device_get_total_ecc_errors", {"nvmlDeviceGetTotalEccErrors"});
  r.bind(a.device_get_retired_pages_v2, "device_get_retired_pages_v2", {"nvmlDeviceGetRetiredPages_v2"});
  r.bind(a.device_get_retired_pages, "device_get_retired_pages", {"nvmlDeviceGetRetiredPages"});
  r.bind(a.device_get_retired_pages_pending_status, "device_get_retired_pages_pending_status",
         {"nvmlDeviceGetRetiredPagesPendingStatus"});
  r.bind(a.device_get_remapped_rows, "device_get_remapped_rows", {"nvmlDeviceGetRemappedRows"});

  // _v3 and _v2 take the same element struct; the unversioned name takes the v1 struct.
  r.bind(a.device_get_compute_running_processes_v2, "device_get_compute_running_processes_v2",
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  r.bind(a.device_get_compute_running_processes_v1, "device_get_compute_running_processes_v1",
         {"nvmlDeviceGetComputeRunningProcesses"});
  r.bind(a.device_get_utilization_rates, "device_get_utilization_rates", {"nvmlDeviceGetUtilizationRates"});

  r.bind(a.device_get_cpu_affinity, "device_get_cpu_affinity", {"nvmlDeviceGetCpuAffinity"});
  r.bind(a.device_get_numa_node_id, "device_get_numa_node_id", {"nvmlDeviceGetNumaNodeId"});

  r.bind(a.gpm_query_device_support, "gpm_query_device_support", {"nvmlGpmQueryDeviceSupport"});
  r.bind(a.gpm_sample_alloc, "gpm_sample_alloc", {"nvmlGpmSampleAlloc"});
  r.bind(a.gpm_sample_free, "gpm_sample_free", {"nvmlGpmSampleFree"});
  r.bind(a.gpm_sample_get, "gpm_sample_get", {"nvmlGpmSampleGet"});
  r.bind(a.gpm_metrics_get, "gpm_metrics_get", {"nvmlGpmMetricsGet"});
  return r.take();
}

}  // namespace chokepoint::nvml
