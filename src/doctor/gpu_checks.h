// Checks of the driver and of each GPU: pure functions of the collected facts, so each
// rule is unit-tested with hand-written facts and no NVML at all.
#pragma once

#include <vector>

#include "doctor/check.h"
#include "doctor/gpu_facts.h"
#include "doctor/host_facts.h"

namespace chokepoint::doctor {

// nvidia-driver and cuda-compat: once per machine. When NVML is unavailable this is the
// one place that says so; the per-GPU checks are then simply absent.
std::vector<Check> driver_checks(const NvmlFacts& nvml, const HostFacts& host);

// Every per-GPU check for one GPU, in display order.
std::vector<Check> gpu_checks(const GpuFacts& gpu, const NvmlFacts& nvml, const HostFacts& host);

Check check_pcie_link(const GpuFacts& g, const NvmlFacts& n);
Check check_persistence_mode(const GpuFacts& g, const NvmlFacts& n);
Check check_clocks(const GpuFacts& g, const NvmlFacts& n);
Check check_memory_errors(const GpuFacts& g, const NvmlFacts& n);
Check check_other_processes(const GpuFacts& g, const NvmlFacts& n);
Check check_numa_affinity(const GpuFacts& g, const HostFacts& h);
Check check_gpm(const GpuFacts& g, const NvmlFacts& n);

}  // namespace chokepoint::doctor
