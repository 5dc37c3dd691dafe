// Which published GPU (machine/gpu_table.h) a device is: by whole tokens of its CUDA or
// NVML name ("L4" never matches "NVIDIA L40S"), the form factor by the name's suffix
// ("PCIe", "SXM4", "NVL", "HBM3") and, where the name leaves it open, by SM count and
// memory size; MIG slices by the name ("... MIG 3g.40gb") or by fewer SMs than the part.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "machine/gpu_table.h"

namespace chokepoint::machine {

struct GpuMatch {
  const GpuModel* model = nullptr;  // nullptr: not in the published table
  bool mig = false;                 // a MIG slice (or a part with fewer SMs than published)
  std::string mig_profile;          // "3g.40gb" when the name gives it
  double sm_share = 1.0;            // the device's share of the part's SMs
  double memory_share = 1.0;        // its share of the part's memory (and bandwidth, L2)
  std::string note;                 // how the figures were scaled or what was assumed
};

// name as the trace or NVML gives it; num_sms / memory_bytes -1 when unknown.
GpuMatch match_gpu(std::string_view name, int32_t num_sms, int64_t memory_bytes);

}  // namespace chokepoint::machine
