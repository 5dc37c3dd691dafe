// Python stack samples of a job: which Python line each thread was on, over time. They
// come from py-spy sampling the job from outside (`run`, `watch`: sampler/pyspy/) or
// from a trace's Python events; importers/pyspy/ reads py-spy's output into this model.
//
// A thread's samples are kept as segments: from one sample to the next the thread is
// taken to stay on the stack it was seen on (py-spy's chrometrace output merges equal
// consecutive samples the same way). Times are CLOCK_REALTIME nanoseconds, the clock of
// the recording's ticks and of the CUPTI and Kineto traces of the same run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace chokepoint::samples {

struct PyFrame {
  std::string function;  // "Trainer.step", "<module>"
  std::string file;      // as the interpreter names it: "train.py", "torch/optim/adamw.py"
  int32_t line = 0;      // 0 unknown
  bool operator<(const PyFrame& o) const {
    return std::tie(file, line, function) < std::tie(o.file, o.line, o.function);
  }
};

struct PyThread {
  int64_t pid = 0;
  int64_t tid = 0;   // the OS thread id (the /proc/PID/task/TID of the recording), 0 unknown
  std::string name;  // Python's thread name: "MainThread", "Thread-1 (worker)"
};

struct PyStackSegment {
  int32_t thread = 0;  // index into threads
  int32_t stack = 0;   // index into stacks
  int64_t start_ns = 0, end_ns = 0;
};

struct PyStacks {
  std::string source;  // "py-spy 0.4.3", "kineto python_function"
  std::vector<PyFrame> frames;
  std::vector<std::vector<int32_t>> stacks;  // frame ids, innermost first
  std::vector<PyThread> threads;
  std::vector<PyStackSegment> segments;  // sorted by thread, then start
  double rate_hz = 0;                    // sampling rate, 0 when not sampled
  bool idle_included = false;            // stacks of threads waiting (off CPU) are kept
  // The text of source lines, "file:line" -> the line (stripped), where it could be read
  // when the run ended (a finding quotes the line that calls .item()).
  std::map<std::string, std::string> source_lines;

  bool empty() const { return segments.empty(); }
  const std::string* line_text(const PyFrame& f) const {
    auto it = source_lines.find(f.file + ":" + std::to_string(f.line));
    return it == source_lines.end() ? nullptr : &it->second;
  }
};

// `base` (a whole run's samples) with the bursts of fast samples of the same job in place of
// its own samples where each burst ran: per thread of a process a burst sampled, the base's
// segments inside the burst's span give way to the burst's (cut at its edges). Time shares
// over the whole run stay what they were; inside the bursts each is known to 2 ms instead
// of 50. Frames, stacks and threads are matched by what they are (pid and OS thread id, or
// pid and name where the id is unknown).
PyStacks with_bursts(const PyStacks& base, const std::vector<PyStacks>& bursts);

// Whether a Python file belongs to a library (site-packages, the standard library,
// <frozen ...>, or, for a trace's relative names, a known package) rather than to the job.
bool is_library_file(const std::string& f);

}  // namespace chokepoint::samples
