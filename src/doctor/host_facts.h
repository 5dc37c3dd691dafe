// What doctor reads about the host, collected once from machine::HostInputs. Every field is
// optional: absent means "could not be read here", which the checks report as skip
// with the reason instead of guessing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/tracer_facts.h"
#include "machine/host_inputs.h"
#include "sampler/proc/proc_parsers.h"

namespace chokepoint::doctor {

struct SwapActivity {
  uint64_t pswpin = 0;   // pages swapped in since boot
  uint64_t pswpout = 0;  // pages swapped out since boot
};

struct TorchInstall {
  std::string path;                 // .../site-packages/torch
  std::string version;              // "2.11.0+cu130"
  std::optional<std::string> cuda;  // "13.0"; nullopt for a CPU-only build
};

struct PciNuma {
  std::optional<int> numa_node;                     // -1: firmware gives none
  std::optional<std::vector<unsigned>> local_cpus;  // local_cpulist
};

struct HostFacts {
  // /proc/meminfo (sampler/proc's parser), only when MemTotal, SwapTotal and SwapFree
  // are all there: the checks need the three.
  std::optional<sampler::proc::MemInfo> meminfo;
  std::optional<SwapActivity> swap_activity;
  std::optional<std::string> thp_enabled;  // the bracketed choice: "always", "madvise", "never"
  std::optional<std::string> thp_defrag;
  unsigned cpus_listed = 0;                   // cpuN directories under /sys/devices/system/cpu
  std::map<std::string, unsigned> governors;  // governor -> number of CPUs; empty: no cpufreq
  std::optional<std::vector<unsigned>> numa_nodes_online;
  std::optional<std::vector<unsigned>> allowed_cpus;  // where this process may run
  std::optional<machine::MemlockLimit> memlock;
  std::optional<machine::FsSpace> dev_shm;
  std::optional<TorchInstall> torch;
  // Only when doctor probes the machine it runs on (not a captured --host-root).
  std::optional<TracerFacts> tracer;
};

HostFacts collect_host_facts(const machine::HostInputs& in);

// The GPU's PCI function in sysfs, by its sysfs address ("0000:3b:00.0").
PciNuma read_pci_numa(const machine::HostInputs& in, const std::string& sysfs_bus_id);

// Exposed for tests.
std::optional<SwapActivity> parse_vmstat_swap(const std::string& text);
std::optional<std::string> parse_sysfs_choice(const std::string& text);  // "always [madvise] never"
std::optional<TorchInstall> parse_torch_version_py(const std::string& text, const std::string& path);
std::optional<TorchInstall> find_torch(const machine::HostInputs& in);

}  // namespace chokepoint::doctor
