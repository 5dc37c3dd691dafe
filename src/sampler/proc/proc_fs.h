// The /proc reader of the live sampler. Every path is read under root(), so tests point
// it at captured files (tests/data/proc/*), like machine::HostInputs (machine/host_inputs.h) does for /sys.
//
// Why it can keep files open: on the dev VM an open+read+close of /proc/PID/task/TID/stat
// costs ~6.9 us but a pread(fd, 0) of an already open one ~2.7 us (schedstat: 4.5 vs
// 0.6 us), and a tick reads hundreds of these files. procfs regenerates the text on
// every read at offset 0, and an open fd stays bound to its task, so a reused PID never
// reads another process (the read fails with ESRCH instead). Held descriptors are
// capped (a quarter of RLIMIT_NOFILE, at most 4096) and close-on-exec.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace chokepoint::sampler::proc {

class ProcFs {
 public:
  // root "/" and held descriptors: the live machine.
  static ProcFs live();
  // A captured tree; files are reopened on every read, so tests may rewrite them. A
  // sibling file "NAME.errno" holding a number makes reads of NAME fail with that errno
  // (EACCES = 13, ESRCH = 3): file modes cannot fake it when tests run as root.
  static ProcFs fixture(std::string root);

  ~ProcFs();
  ProcFs(ProcFs&& other) noexcept;
  ProcFs& operator=(ProcFs&&) = delete;
  ProcFs(const ProcFs&) = delete;
  ProcFs& operator=(const ProcFs&) = delete;

  // Reads the file at `path` (absolute as on a live system: "/proc/stat") into `out`.
  // Returns 0 or the errno: ENOENT / ESRCH (gone), EACCES (not ours to read).
  int read(const std::string& path, std::string& out);
  // Entry names of a directory (unsorted); empty when it cannot be read.
  std::vector<std::string> list_dir(const std::string& path) const;
  // Closes held descriptors of paths starting with `prefix` ("/proc/4242/").
  void forget(const std::string& prefix);

  const std::string& root() const { return root_; }
  size_t held_descriptors() const { return fds_.size(); }

 private:
  ProcFs(std::string root, bool hold);
  std::string resolve(const std::string& path) const;

  std::string root_;
  bool hold_ = false;
  size_t max_held_ = 0;
  std::map<std::string, int> fds_;  // ordered: forget() erases a prefix range
};

}  // namespace chokepoint::sampler::proc
