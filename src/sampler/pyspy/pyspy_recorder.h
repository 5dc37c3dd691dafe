// Python stacks of the job, sampled from outside by py-spy (https://github.com/benfred/py-spy,
// a static binary from PyPI: `pip install py-spy`). No code change in the job and no GIL
// taken: py-spy reads the interpreter's memory with process_vm_readv (--nonblocking: the
// job is never paused), which needs ptrace rights over it (same user and
// kernel.yama.ptrace_scope <= 1 for a child, or root / CAP_SYS_PTRACE).
//
// `run` and `watch` start one `py-spy record` on the topmost Python process of the tree
// (with --subprocesses only when asked: DataLoader workers, torchrun ranks), --idle (threads waiting are
// sampled too: a main thread blocked on the loader's queue is the answer to "why is the
// GPU idle"), --threads (OS thread ids, to match the CUPTI trace's) and --format
// chrometrace (the only py-spy output with sample times). py-spy keeps its samples in
// memory and writes the file when the process exits or it gets SIGINT.
//
// Why not our own reader: py-spy already knows every CPython layout from 2.7 to 3.14;
// what its output lacks is each sample's GIL and idle flags (chrometrace.rs drops them),
// so GIL waiting is not measured from stacks (docs/RECORDING.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace chokepoint::sampler {

struct PySpyOptions {
  std::string binary;   // py-spy's path ("" not found)
  double rate_hz = 20;  // samples per second per thread
  // Also sample the target's child processes (DataLoader workers, compile workers): each
  // costs py-spy about as much as the target (docs/BENCHMARKS.md), so it is an option.
  bool subprocesses = false;
  int duration_s = 0;    // stop by itself after this many seconds (0: when the job ends)
  std::string out_file;  // its chrometrace output
  std::string log_file;  // its stdout and stderr (appended: every attempt's output stays)
};

// Finds py-spy: `explicit_path` when given (must be executable), else $CHOKEPOINT_PY_SPY,
// else PATH. "" and `why` when there is none.
std::string find_pyspy(const std::string& explicit_path, std::string* why);

// `py-spy --version` ("py-spy 0.4.3"), "" when it does not answer.
std::string pyspy_version(const std::string& binary);

class PySpyRecorder {
 public:
  // Starts `py-spy record` on `pid`. Fails only when py-spy cannot be executed; attaching
  // fails later (poll() then returns its exit code and error() says why).
  // `now_ns` is the caller's CLOCK_REALTIME stamp of this moment (py-spy's ts 0 is within
  // milliseconds of its start: it creates its recorder before attaching).
  static Result<std::unique_ptr<PySpyRecorder>> start(const PySpyOptions& o, int64_t pid, int64_t now_ns);
  ~PySpyRecorder();

  // Its exit code once it has exited (never blocks).
  std::optional<int> poll();
  // Asks it to write its file and exit (SIGINT), waits up to `timeout_ns`, then kills it.
  // The exit code (nullopt when it had to be killed).
  std::optional<int> stop(int64_t timeout_ns);
  // CLOCK_REALTIME of its ts 0 (when it started recording), and the target.
  int64_t origin_ns() const { return origin_ns_; }
  int64_t target() const { return target_; }
  // The first error line it printed ("" none), and whether it is a permission error.
  std::string error() const;
  bool permission_denied() const;
  // Its CPU time (user + system) once reaped, seconds.
  double cpu_s() const { return cpu_s_; }

 private:
  PySpyRecorder() = default;
  PySpyOptions o_;
  pid_t pid_ = -1;
  int64_t target_ = 0;
  int64_t origin_ns_ = 0;
  std::optional<int> exit_code_;
  double cpu_s_ = 0;
};

// The text of source lines named in a py-spy chrometrace file, "file:line" -> line
// (whitespace stripped), for the job's own files: relative names are resolved against
// `cwd` (the job's working directory); library files (site-packages, the standard
// library, <frozen ...>) are left out. At most `max_lines`.
std::map<std::string, std::string> source_lines_of(const std::string& chrometrace_file, const std::string& cwd,
                                                   size_t max_lines = 4000);

}  // namespace chokepoint::sampler
