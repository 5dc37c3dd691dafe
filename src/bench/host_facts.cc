#include "bench/host_facts.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "base/cpu_list.h"

namespace chokepoint::bench {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Environment variables that change what bench measures (tracing, synchronous launches,
// TF32 off, device selection).
constexpr const char* kRelevantEnv[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING",        "CUDA_INJECTION64_PATH", "LD_PRELOAD",
    "NVIDIA_TF32_OVERRIDE", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING",
};

}  // namespace

int pcie_gen_from_speed(std::string_view s) {
  // Transfer rate per lane by generation: 2.5, 5, 8, 16, 32, 64 GT/s.
  const double gts = std::atof(std::string(s).c_str());
  if (gts <= 0) return -1;
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};
  for (int i = 0; i < 6; ++i) {
    if (gts < kRates[i] * 1.1) return i + 1;
  }
  return 6;
}

int pcie_width_from_text(std::string_view s) {
  std::string t(s);
  if (!t.empty() && (t[0] == 'x' || t[0] == 'X')) t.erase(0, 1);
  const int w = std::atoi(t.c_str());
  return w > 0 ? w : -1;
}

machine::HostInfo collect_host_info(const std::string& root) {
  namespace fs = std::filesystem;
  machine::HostInfo h;
  char name[256] = {};
  if (root.empty() && gethostname(name, sizeof(name) - 1) == 0) h.hostname = name;

  std::set<unsigned> allowed;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (root.empty() && sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) allowed.insert(static_cast<unsigned>(c));
    }
  } else if (auto online = parse_cpu_list(read_text(root + "/sys/devices/system/cpu/online"))) {
    allowed.insert(online->begin(), online->end());
  }
  if (!allowed.empty()) h.cpus = static_cast<int>(allowed.size());

  const std::string load = read_text(root + "/proc/loadavg");
  if (!load.empty()) h.loadavg_1m = std::atof(load.c_str());

  // The x86 "hypervisor" CPUID bit shows up as a cpuinfo flag inside VMs.
  const std::string cpuinfo = read_text(root + "/proc/cpuinfo");
  h.virtual_machine = cpuinfo.find(" hypervisor") != std::string::npos;
  h.cpu_governor = read_text(root + "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");

  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root + "/sys/class/iommu", ec)) {
    (void)e;
    h.iommu = true;
    break;
  }
  for (const auto& e : fs::directory_iterator(root + "/sys/devices/system/node", ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("node", 0) != 0 || n.size() < 5 || !std::isdigit(static_cast<unsigned char>(n[4]))) continue;
    const auto cpus = parse_cpu_list(read_text(e.path().string() + "/cpulist"));
    for (unsigned c : cpus.value_or(std::vector<unsigned>{})) {
      if (allowed.count(c) != 0) {
        h.process_numa_nodes.push_back(std::atoi(n.c_str() + 4));
        break;
      }
    }
  }
  std::sort(h.process_numa_nodes.begin(), h.process_numa_nodes.end());
  if (root.empty()) {
    for (const char* var : kRelevantEnv) {
      if (const char* v = std::getenv(var); v != nullptr) h.env.push_back(std::string(var) + "=" + v);
    }
  }
  return h;
}

void fill_gpu_host_facts(machine::GpuProfile& g, const std::string& root) {
  if (g.pci_bus_id.empty()) return;
  const std::string dir = root + "/sys/bus/pci/devices/" + g.pci_bus_id;
  g.pcie_speed_max = read_text(dir + "/max_link_speed");
  g.pcie_width_max = read_text(dir + "/max_link_width");
  const std::string numa = read_text(dir + "/numa_node");
  if (!numa.empty()) g.numa_node = std::atoi(numa.c_str());  // -1 on single-node hosts
}

}  // namespace chokepoint::bench
