// Where host facts are read from (doctor's checks, bench's host facts). Files (/proc, /sys, site-packages) are read
// under root(), so tests point root at captured fixtures (tests/data/host/*). The three
// facts that come from system calls rather than files have hooks: the live set calls
// sched_getaffinity / getrlimit / statvfs; the fixture set reads them from files under
// the same root (proc/self/status, proc/self/limits, statvfs.txt), so one directory
// describes a whole machine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace chokepoint::machine {

struct MemlockLimit {
  bool soft_unlimited = false;
  uint64_t soft_bytes = 0;
  bool hard_unlimited = false;
  uint64_t hard_bytes = 0;
};

struct FsSpace {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};

struct HostInputs {
  std::string root = "/";
  std::function<std::optional<std::vector<unsigned>>()> allowed_cpus;
  std::function<std::optional<MemlockLimit>()> memlock;
  std::function<std::optional<FsSpace>(const std::string& path)> fs_space;
  // Environment variables consulted (VIRTUAL_ENV, CONDA_PREFIX, HOME); paths in them
  // are resolved under root too.
  std::map<std::string, std::string> env;

  // `path` is absolute as on a live system ("/proc/meminfo").
  std::string resolve(const std::string& path) const;
  std::optional<std::string> read(const std::string& path, size_t max_bytes = 1 << 20) const;
  std::vector<std::string> list_dir(const std::string& path) const;  // names, sorted
  bool exists(const std::string& path) const;
};

// This machine: root "/", system calls, the real environment.
HostInputs live_host_inputs();

// A captured machine under `root` (see the header comment and tests/data/host/README.md).
HostInputs fixture_host_inputs(const std::string& root);

// Parsers shared by the fixture hooks and the tests.
std::optional<std::vector<unsigned>> parse_status_cpus_allowed(const std::string& proc_status);
std::optional<MemlockLimit> parse_limits_memlock(const std::string& proc_limits);

}  // namespace chokepoint::machine
