// Host-side facts that explain benchmark results: PCIe link limits and NUMA placement
// of each GPU (sysfs), whether we run in a VM, the CPU governor, load, and environment
// variables that change CUDA's behaviour. Read through machine::HostInputs, the reader
// doctor's host checks use too, so tests point both at a captured or fake tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "machine/host_inputs.h"
#include "machine/profile.h"

namespace chokepoint::bench {

// Host facts (hostname, VM, governor, load, IOMMU, NUMA nodes of this process' CPUs,
// relevant environment). The hostname and the environment are this process's, so only
// taken when `in` is the live machine (root "/").
machine::HostInfo collect_host_info(const machine::HostInputs& in);

// Fills the GPU's maximum PCIe link and NUMA node from
// /sys/bus/pci/devices/<pci_bus_id>/; leaves them unknown when absent (VMs).
void fill_gpu_host_facts(machine::GpuProfile& g, const machine::HostInputs& in);

}  // namespace chokepoint::bench
