#include "machine/host_inputs.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/cpu_list.h"

namespace chokepoint::machine {
namespace fs = std::filesystem;

std::string HostInputs::resolve(const std::string& path) const {
  if (root.empty() || root == "/") return path;
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return path.empty() || path[0] != '/' ? r + "/" + path : r + path;
}

std::optional<std::string> HostInputs::read(const std::string& path, size_t max_bytes) const {
  // /proc and /sys files report size 0: read until EOF, bounded.
  std::ifstream in(resolve(path), std::ios::binary);
  if (!in) return std::nullopt;
  std::string out;
  char buf[4096];
  while (out.size() < max_bytes && in.read(buf, sizeof buf).gcount() > 0) {
    out.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return std::nullopt;
  return out;
}

std::vector<std::string> HostInputs::list_dir(const std::string& path) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(resolve(path), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool HostInputs::exists(const std::string& path) const {
  std::error_code ec;
  return fs::exists(resolve(path), ec);
}

std::optional<std::vector<unsigned>> parse_status_cpus_allowed(const std::string& proc_status) {
  std::istringstream in(proc_status);
  std::string line;
  while (std::getline(in, line)) {
    constexpr std::string_view kKey = "Cpus_allowed_list:";
    if (line.rfind(kKey, 0) == 0) return parse_cpu_list(std::string_view(line).substr(kKey.size()));
  }
  return std::nullopt;
}

std::optional<MemlockLimit> parse_limits_memlock(const std::string& proc_limits) {
  // "Max locked memory         8388608              8388608              bytes"
  std::istringstream in(proc_limits);
  std::string line;
  while (std::getline(in, line)) {
    constexpr std::string_view kKey = "Max locked memory";
    if (line.rfind(kKey, 0) != 0) continue;
    std::istringstream fields(line.substr(kKey.size()));
    std::string soft, hard;
    if (!(fields >> soft >> hard)) return std::nullopt;
    MemlockLimit m;
    m.soft_unlimited = soft == "unlimited";
    m.hard_unlimited = hard == "unlimited";
    if (!m.soft_unlimited) m.soft_bytes = std::strtoull(soft.c_str(), nullptr, 10);
    if (!m.hard_unlimited) m.hard_bytes = std::strtoull(hard.c_str(), nullptr, 10);
    return m;
  }
  return std::nullopt;
}

HostInputs live_host_inputs() {
  HostInputs in;
  in.root = "/";
  in.allowed_cpus = []() -> std::optional<std::vector<unsigned>> {
    // Large enough for any machine Linux supports today; the kernel rejects smaller
    // masks with EINVAL on hosts with more possible CPUs than the mask holds.
    constexpr int kMaxCpus = 8192;
    cpu_set_t* set = CPU_ALLOC(kMaxCpus);
    if (set == nullptr) return std::nullopt;
    const size_t size = CPU_ALLOC_SIZE(kMaxCpus);
    CPU_ZERO_S(size, set);
    std::optional<std::vector<unsigned>> out;
    if (sched_getaffinity(0, size, set) == 0) {
      out.emplace();
      for (int c = 0; c < kMaxCpus; ++c) {
        if (CPU_ISSET_S(c, size, set)) out->push_back(static_cast<unsigned>(c));
      }
    }
    CPU_FREE(set);
    return out;
  };
  in.memlock = []() -> std::optional<MemlockLimit> {
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return std::nullopt;
    MemlockLimit m;
    m.soft_unlimited = rl.rlim_cur == RLIM_INFINITY;
    m.hard_unlimited = rl.rlim_max == RLIM_INFINITY;
    if (!m.soft_unlimited) m.soft_bytes = rl.rlim_cur;
    if (!m.hard_unlimited) m.hard_bytes = rl.rlim_max;
    return m;
  };
  in.fs_space = [](const std::string& path) -> std::optional<FsSpace> {
    struct statvfs st {};
    if (statvfs(path.c_str(), &st) != 0) return std::nullopt;
    return FsSpace{static_cast<uint64_t>(st.f_blocks) * st.f_frsize, static_cast<uint64_t>(st.f_bavail) * st.f_frsize};
  };
  for (const char* name : {"VIRTUAL_ENV", "CONDA_PREFIX", "HOME", "PATH"}) {
    if (const char* v = std::getenv(name); v != nullptr && v[0] != '\0') in.env[name] = v;
  }
  return in;
}

HostInputs fixture_host_inputs(const std::string& root) {
  HostInputs in;
  in.root = root;
  // The lambdas capture a copy of root-only state, never `in` itself (it is returned by value).
  HostInputs reader;
  reader.root = root;
  in.allowed_cpus = [reader]() -> std::optional<std::vector<unsigned>> {
    auto text = reader.read("/proc/self/status");
    return text ? parse_status_cpus_allowed(*text) : std::nullopt;
  };
  in.memlock = [reader]() -> std::optional<MemlockLimit> {
    auto text = reader.read("/proc/self/limits");
    return text ? parse_limits_memlock(*text) : std::nullopt;
  };
  // statvfs.txt: one "PATH TOTAL_BYTES AVAILABLE_BYTES" line per file system.
  in.fs_space = [reader](const std::string& path) -> std::optional<FsSpace> {
    auto text = reader.read("/statvfs.txt");
    if (!text) return std::nullopt;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string p;
      FsSpace s;
      if ((f >> p >> s.total_bytes >> s.available_bytes) && p == path) return s;
    }
    return std::nullopt;
  };
  return in;
}

}  // namespace chokepoint::machine
