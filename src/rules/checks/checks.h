// Machine evaluators: what `doctor` checks, as rules of the one engine (rule.h). Each is a
// pure function of the facts doctor collected (doctor/host_facts.h, doctor/gpu_facts.h),
// so it is unit-tested with hand-written facts and no NVML at all. Ids are the engine's:
// pcie-link-degraded, clock-throttled, host-swapping and numa-mismatch are the same rules
// that live samples evaluate.
#pragma once

#include <vector>

#include "rules/machine_evidence.h"
#include "rules/rule.h"

namespace chokepoint::rules::checks {

// The rules' machine evaluators (registry.cc), one per rule id. Per-GPU ones assess every
// GPU NVML can open (gpu-access speaks for those it cannot); nvidia-driver says once when
// there is no driver, and the others then assess nothing.
std::vector<Assessment> nvidia_driver(const MachineEvidence& m);
std::vector<Assessment> cuda_compat(const MachineEvidence& m);
std::vector<Assessment> gpu_access(const MachineEvidence& m);
std::vector<Assessment> pcie_link_degraded(const MachineEvidence& m);
std::vector<Assessment> persistence_mode(const MachineEvidence& m);
std::vector<Assessment> clock_throttled(const MachineEvidence& m);
std::vector<Assessment> memory_errors(const MachineEvidence& m);
std::vector<Assessment> gpu_shared(const MachineEvidence& m);
std::vector<Assessment> numa_mismatch(const MachineEvidence& m);
std::vector<Assessment> gpm_metrics(const MachineEvidence& m);
std::vector<Assessment> cpu_governor(const MachineEvidence& m);
std::vector<Assessment> host_swapping(const MachineEvidence& m);
std::vector<Assessment> transparent_hugepages(const MachineEvidence& m);
std::vector<Assessment> memlock(const MachineEvidence& m);
std::vector<Assessment> dev_shm(const MachineEvidence& m);
std::vector<Assessment> trace_ready(const MachineEvidence& m);

// The rules' bench evaluators (checks/bench.cc): why a `chokepoint bench` result is below par.
std::optional<std::string> bench_pcie_link(const BenchEvidence& e);
std::optional<std::string> bench_numa(const BenchEvidence& e);
std::optional<std::string> bench_gpu_shared(const BenchEvidence& e);
std::optional<std::string> bench_clock(const BenchEvidence& e);
std::optional<std::string> bench_tf32_off(const BenchEvidence& e);
std::optional<std::string> bench_pageable(const BenchEvidence& e);
std::optional<std::string> bench_host_busy(const BenchEvidence& e);
std::optional<std::string> bench_governor(const BenchEvidence& e);
std::optional<std::string> bench_profiler(const BenchEvidence& e);
std::optional<std::string> bench_launch_blocking(const BenchEvidence& e);
std::optional<std::string> bench_io_virtualization(const BenchEvidence& e);

// One subject each: what the evaluators above run per GPU / on the host.
Assessment check_nvidia_driver(const doctor::NvmlFacts& n);
Assessment check_cuda_compat(const doctor::NvmlFacts& n, const doctor::HostFacts& h);
Assessment check_gpu_access(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_pcie_link(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_persistence_mode(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_clocks(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_memory_errors(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_other_processes(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_numa_affinity(const doctor::GpuFacts& g, const doctor::HostFacts& h);
Assessment check_gpm(const doctor::GpuFacts& g, const doctor::NvmlFacts& n);
Assessment check_cpu_governor(const doctor::HostFacts& f);
Assessment check_swap(const doctor::HostFacts& f);
Assessment check_transparent_hugepages(const doctor::HostFacts& f);
Assessment check_memlock(const doctor::HostFacts& f);
Assessment check_dev_shm(const doctor::HostFacts& f);
Assessment check_trace_ready(const doctor::HostFacts& h, const doctor::NvmlFacts& n);

// Shared by the evaluators: a passing assessment to start from, one that could not be
// judged (and why), and raising one to a finding of at least `s` with a sentence of advice.
Assessment pass(const char* id, const char* title, Assessment::Scope scope, int gpu = -1);
Assessment skipped(Assessment a, std::string why);
void raise(Assessment& a, Severity s, const std::string& advice = "");

}  // namespace chokepoint::rules::checks
