#include "doctor/host_facts.h"

#include <algorithm>

#include <cstdlib>
#include <sstream>

#include "base/cpu_list.h"
#include "base/text.h"

namespace chokepoint::doctor {
namespace {

bool is_cpu_dir(const std::string& name) {
  if (name.size() < 4 || name.rfind("cpu", 0) != 0) return false;
  for (size_t i = 3; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}

// Value of `key = '...'` or `key: Optional[str] = '...'` in a Python file; nullopt
// when absent, "" when the value is None.
std::optional<std::string> python_string(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const char next = line.size() > key.size() ? line[key.size()] : '\0';
    if (next != ' ' && next != ':' && next != '=') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string value(trim(line.substr(eq + 1)));
    if (value == "None") return std::string();
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front()) {
      return value.substr(1, value.size() - 2);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<SwapActivity> parse_vmstat_swap(const std::string& text) {
  std::istringstream in(text);
  std::string key;
  uint64_t value = 0;
  SwapActivity s;
  int found = 0;
  while (in >> key >> value) {
    if (key == "pswpin") s.pswpin = value, ++found;
    if (key == "pswpout") s.pswpout = value, ++found;
  }
  if (found < 2) return std::nullopt;
  return s;
}

std::optional<std::string> parse_sysfs_choice(const std::string& text) {
  const auto open = text.find('[');
  const auto close = text.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  return text.substr(open + 1, close - open - 1);
}

std::optional<TorchInstall> parse_torch_version_py(const std::string& text, const std::string& path) {
  auto version = python_string(text, "__version__");
  if (!version) return std::nullopt;
  TorchInstall t;
  t.path = path;
  t.version = *version;
  if (auto cuda = python_string(text, "cuda"); cuda && !cuda->empty()) t.cuda = *cuda;
  return t;
}

std::optional<TorchInstall> find_torch(const machine::HostInputs& in) {
  // Where pip, venv, conda, pyenv and Debian put packages; the first install found wins,
  // in the order Python of an activated environment would see them.
  std::vector<std::string> prefixes;
  auto env = [&](const char* name) -> std::string {
    auto it = in.env.find(name);
    return it == in.env.end() ? std::string() : it->second;
  };
  if (!env("VIRTUAL_ENV").empty()) prefixes.push_back(env("VIRTUAL_ENV"));
  if (!env("CONDA_PREFIX").empty()) prefixes.push_back(env("CONDA_PREFIX"));
  // The environment of the python3 first on PATH (e.g. an image's /opt/torch/.venv/bin).
  const std::string path = env("PATH");
  for (size_t b = 0; b <= path.size();) {
    size_t e = path.find(':', b);
    if (e == std::string::npos) e = path.size();
    const std::string dir = path.substr(b, e - b);
    b = e + 1;
    if (dir.size() < 5 || dir.compare(dir.size() - 4, 4, "/bin") != 0) continue;
    const auto entries = in.list_dir(dir);
    if (std::find(entries.begin(), entries.end(), "python3") != entries.end()) {
      prefixes.push_back(dir.substr(0, dir.size() - 4));
      break;
    }
  }
  if (!env("HOME").empty()) {
    prefixes.push_back(env("HOME") + "/.local");
    for (const auto& v : in.list_dir(env("HOME") + "/.pyenv/versions")) {
      prefixes.push_back(env("HOME") + "/.pyenv/versions/" + v);
    }
  }
  for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) prefixes.emplace_back(p);
  for (const auto& prefix : prefixes) {
    for (const auto& dir : in.list_dir(prefix + "/lib")) {
      if (dir.rfind("python3", 0) != 0) continue;
      for (const char* sub : {"site-packages", "dist-packages"}) {
        const std::string torch_dir = prefix + "/lib/" + dir + "/" + sub + "/torch";
        if (auto text = in.read(torch_dir + "/version.py", 64 << 10)) {
          if (auto t = parse_torch_version_py(*text, torch_dir)) return t;
        }
      }
    }
  }
  return std::nullopt;
}

PciNuma read_pci_numa(const machine::HostInputs& in, const std::string& sysfs_bus_id) {
  PciNuma p;
  const std::string dir = "/sys/bus/pci/devices/" + sysfs_bus_id;
  if (auto node = in.read(dir + "/numa_node")) {
    char* end = nullptr;
    const std::string t(trim(*node));
    const long v = std::strtol(t.c_str(), &end, 10);
    if (!t.empty() && end != nullptr && *end == '\0') p.numa_node = static_cast<int>(v);
  }
  if (auto cpus = in.read(dir + "/local_cpulist")) p.local_cpus = parse_cpu_list(*cpus);
  return p;
}

HostFacts collect_host_facts(const machine::HostInputs& in) {
  HostFacts f;
  if (auto t = in.read("/proc/meminfo")) {
    const sampler::proc::MemInfo m = sampler::proc::parse_meminfo(*t);
    if (m.mem_total_bytes && m.swap_total_bytes && m.swap_free_bytes) f.meminfo = m;
  }
  if (auto t = in.read("/proc/vmstat")) f.swap_activity = parse_vmstat_swap(*t);
  if (auto t = in.read("/sys/kernel/mm/transparent_hugepage/enabled")) f.thp_enabled = parse_sysfs_choice(*t);
  if (auto t = in.read("/sys/kernel/mm/transparent_hugepage/defrag")) f.thp_defrag = parse_sysfs_choice(*t);
  for (const auto& name : in.list_dir("/sys/devices/system/cpu")) {
    if (!is_cpu_dir(name)) continue;
    ++f.cpus_listed;
    if (auto g = in.read("/sys/devices/system/cpu/" + name + "/cpufreq/scaling_governor")) {
      const std::string gov(trim(*g));
      if (!gov.empty()) ++f.governors[gov];
    }
  }
  if (auto t = in.read("/sys/devices/system/node/online")) f.numa_nodes_online = parse_cpu_list(*t);
  if (in.allowed_cpus) f.allowed_cpus = in.allowed_cpus();
  if (in.memlock) f.memlock = in.memlock();
  if (in.fs_space) f.dev_shm = in.fs_space("/dev/shm");
  f.torch = find_torch(in);
  return f;
}

}  // namespace chokepoint::doctor
