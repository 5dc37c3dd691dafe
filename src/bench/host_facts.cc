#include "bench/host_facts.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <vector>

#include "base/cpu_list.h"

namespace chokepoint::bench {
namespace {

// The file's text without trailing whitespace; "" when it cannot be read.
std::string read_text(const machine::HostInputs& in, const std::string& path) {
  std::string s = in.read(path).value_or("");
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

bool is_live(const machine::HostInputs& in) { return in.root.empty() || in.root == "/"; }

// Environment variables that change what bench measures (tracing, synchronous launches,
// TF32 off, device selection).
constexpr const char* kRelevantEnv[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING",        "CUDA_INJECTION64_PATH", "LD_PRELOAD",
    "NVIDIA_TF32_OVERRIDE", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING",
};

// Where this process may run: its affinity when the inputs can say, else every online CPU.
std::set<unsigned> allowed_cpus(const machine::HostInputs& in) {
  std::optional<std::vector<unsigned>> cpus;
  if (in.allowed_cpus) cpus = in.allowed_cpus();
  if (!cpus) cpus = parse_cpu_list(read_text(in, "/sys/devices/system/cpu/online"));
  return cpus ? std::set<unsigned>(cpus->begin(), cpus->end()) : std::set<unsigned>{};
}

// NUMA nodes holding at least one of `allowed`, ascending.
std::vector<int> numa_nodes_of(const machine::HostInputs& in, const std::set<unsigned>& allowed) {
  std::vector<int> nodes;
  for (const auto& n : in.list_dir("/sys/devices/system/node")) {
    if (n.rfind("node", 0) != 0 || n.size() < 5 || !std::isdigit(static_cast<unsigned char>(n[4]))) continue;
    const auto cpus = parse_cpu_list(read_text(in, "/sys/devices/system/node/" + n + "/cpulist"));
    const auto& list = cpus.value_or(std::vector<unsigned>{});
    if (std::any_of(list.begin(), list.end(), [&](unsigned c) { return allowed.count(c) != 0; })) {
      nodes.push_back(std::atoi(n.c_str() + 4));
    }
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

}  // namespace

machine::HostInfo collect_host_info(const machine::HostInputs& in) {
  machine::HostInfo h;
  char name[256] = {};
  if (is_live(in) && gethostname(name, sizeof(name) - 1) == 0) h.hostname = name;

  const std::set<unsigned> allowed = allowed_cpus(in);
  if (!allowed.empty()) h.cpus = static_cast<int>(allowed.size());

  const std::string load = read_text(in, "/proc/loadavg");
  if (!load.empty()) h.loadavg_1m = std::atof(load.c_str());

  // The x86 "hypervisor" CPUID bit shows up as a cpuinfo flag inside VMs.
  h.virtual_machine = read_text(in, "/proc/cpuinfo").find(" hypervisor") != std::string::npos;
  h.cpu_governor = read_text(in, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  h.iommu = !in.list_dir("/sys/class/iommu").empty();
  h.process_numa_nodes = numa_nodes_of(in, allowed);
  if (is_live(in)) {
    for (const char* var : kRelevantEnv) {
      if (const char* v = std::getenv(var); v != nullptr) h.env.push_back(std::string(var) + "=" + v);
    }
  }
  return h;
}

void fill_gpu_host_facts(machine::GpuProfile& g, const machine::HostInputs& in) {
  if (g.pci_bus_id.empty()) return;
  const std::string dir = "/sys/bus/pci/devices/" + g.pci_bus_id;
  g.pcie_speed_max = read_text(in, dir + "/max_link_speed");
  g.pcie_width_max = read_text(in, dir + "/max_link_width");
  const std::string numa = read_text(in, dir + "/numa_node");
  if (!numa.empty()) g.numa_node = std::atoi(numa.c_str());  // -1 on single-node hosts
}

}  // namespace chokepoint::bench
