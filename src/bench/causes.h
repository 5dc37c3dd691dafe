// Likely causes of a benchmark result below par, from what the run and the host tell:
// the PCIe link under load vs its maximum, NUMA placement, the SM clock under load,
// memory held by other processes, tracers and settings in the environment, a VM.
// Ordered most specific first; a generic cause when nothing specific applies.
#pragma once

#include <string>
#include <vector>

#include "bench/expectations.h"
#include "machine/profile.h"

namespace chokepoint::bench {

// Every cause that applies to measurement m of GPU g (most specific first).
std::vector<std::string> likely_causes(Group group, const machine::Measurement& m, const machine::GpuProfile& g,
                                       const machine::HostInfo& h);

// GPU memory other processes hold, from the free memory at the start minus what a
// CUDA context of our own takes; 0 when unknown.
double foreign_gpu_memory_gib(const machine::GpuProfile& g);

}  // namespace chokepoint::bench
