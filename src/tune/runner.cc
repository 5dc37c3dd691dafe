#include "tune/runner.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "live/monitor.h"
#include "pipeline/live_report.h"
#include "rules/finding.h"
#include "tracer/trace_format.h"

namespace chokepoint::tune {
namespace {

namespace fs = std::filesystem;

// New complete lines of a file that another process appends to.
class Tail {
 public:
  explicit Tail(std::string path) : path_(std::move(path)) {}
  // The lines completed since the last call (`all`: the last partial one too).
  std::vector<std::string> lines(bool all = false) {
    std::ifstream in(path_, std::ios::binary);
    std::vector<std::string> out;
    if (!in) return out;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), {});
    offset_ += chunk.size();
    partial_ += chunk;
    for (size_t nl = partial_.find_first_of("\r\n"); nl != std::string::npos; nl = partial_.find_first_of("\r\n")) {
      out.push_back(partial_.substr(0, nl));
      partial_.erase(0, nl + 1);
    }
    if (all && !partial_.empty()) out.push_back(std::exchange(partial_, ""));
    return out;
  }

 private:
  std::string path_;
  size_t offset_ = 0;
  std::string partial_;
};

std::optional<double> number_in(const std::string& line, const Pattern& re) {
  const std::optional<std::string> hit = re.find(line);
  if (!hit) return std::nullopt;
  const std::string& text = *hit;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  return v;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The last line of `text` with something in it, shortened.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  if (last.size() > 200) last = last.substr(0, 197) + "...";
  return last;
}

// Steps mode: the trace of the step window is complete once a windowed trace file ends
// with its kEnd record (tracer/trace_format.h) and has stopped growing.
class WindowWatch {
 public:
  explicit WindowWatch(std::string dir) : dir_(std::move(dir)) {}
  bool complete() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(tracer::kTraceFilePrefix, 0) != 0 || name.find("-w") == std::string::npos) continue;
      const uintmax_t size = e.file_size(ec);
      if (ec || size < sizeof(tracer::FileHeader) + sizeof(tracer::Record)) continue;
      std::ifstream in(e.path(), std::ios::binary);
      in.seekg(static_cast<std::streamoff>(size - sizeof(tracer::Record)));
      const int kind = in.get();
      const bool ended = kind == static_cast<int>(tracer::RecordKind::kEnd);
      if (ended && size == last_size_) return true;
      last_size_ = ended ? size : 0;
    }
    return false;
  }

 private:
  std::string dir_;
  uintmax_t last_size_ = 0;
};

// The trial's figures from its recording: verdict, the GPUs' peak memory, the steps.
void read_recording(const RunnerOptions& o, const std::string& rec, std::optional<double> batch, Trial& t) {
  auto rep = pipeline::analyze_recording_dir(rec);
  if (!rep.ok()) {
    if (t.note.empty()) t.note = "no diagnosis: " + rep.status().message();
    return;
  }
  t.verdict = rules::category_name(rep->verdict.bound);
  t.verdict_summary = rep->verdict.summary;
  if (!t.peak_memory_bytes && rep->live) {
    for (const report::LiveGpu& g : rep->live->gpus) {
      if (g.used && g.memory_used_max_bytes) {
        t.peak_memory_bytes = std::max(t.peak_memory_bytes.value_or(0), *g.memory_used_max_bytes);
        t.memory_source = "nvml";
      }
    }
  }
  if (!o.metric && rep->window.steps > 0 && rep->window.step_time_ms.p50 > 0) {
    t.measured = static_cast<int>(rep->window.steps);
    t.throughput = 1000.0 / rep->window.step_time_ms.p50 * batch.value_or(1);
  }
}

live::MonitorOptions monitor_options(const RunnerOptions& o, const std::vector<std::string>& argv,
                                     const std::string& dir) {
  live::MonitorOptions mo;
  mo.session.out_dir = dir + "/recording";
  mo.session.replace = true;
  mo.session.gpu = o.gpu;
  mo.command = argv;
  mo.view = live::ViewMode::kNone;
  mo.quiet = true;
  mo.stacks.enabled = false;
  mo.duration_ns = static_cast<int64_t>(o.timeout_s * 1e9);
  mo.kill_grace_ns = 5'000'000'000;
  mo.stdout_path = dir + "/stdout.log";
  mo.stderr_path = dir + "/stderr.log";
  if (!o.metric) {
    mo.tracer_library = o.tracer_library;
    mo.trace_window = "steps=" + std::to_string(o.warmup) + ":" + std::to_string(o.steps);
  }
  return mo;
}

// What a running trial printed, asked after every tick: "measured" once it printed
// enough values (or its step window is traced), "early" once clearly worse than the best.
class TrialWatch {
 public:
  TrialWatch(const RunnerOptions& o, const live::MonitorOptions& mo, std::optional<double> best)
      : o_(o), best_(best), out_(mo.stdout_path), err_(mo.stderr_path), window_(mo.session.out_dir) {}

  std::string check() {
    take(false);
    if (oom_) return "oom";
    if (!o_.metric) return window_.complete() ? "measured" : "";
    if (values_.size() >= wanted()) return "measured";
    const int after = static_cast<int>(values_.size()) - o_.warmup;
    if (best_ && o_.early_stop > 0 && after >= o_.early_stop_after) {
      if (const auto m = measured_median(values_, o_.warmup); m && *m < o_.early_stop * *best_) return "early";
    }
    return "";
  }

  // The values once the command has exited; what it printed between the stop and its
  // exit is not part of the trial.
  std::vector<double> finish() {
    take(true);
    if (values_.size() > wanted()) values_.resize(wanted());
    return values_;
  }

 private:
  size_t wanted() const { return static_cast<size_t>(o_.warmup + o_.steps); }
  void take(bool all) {
    for (Tail* tail : {&out_, &err_}) {
      for (const std::string& line : tail->lines(all)) {
        oom_ = oom_ || says_out_of_memory(line);
        if (!o_.metric) continue;
        if (auto v = number_in(line, *o_.metric)) values_.push_back(*v);
      }
    }
  }

  const RunnerOptions& o_;
  std::optional<double> best_;
  Tail out_, err_;
  WindowWatch window_;
  std::vector<double> values_;
  bool oom_ = false;
};

// How the trial ended, from how the monitor stopped it and its exit status.
void classify(const RunnerOptions& o, const live::MonitorResult& m, bool interrupted, bool oom_said,
              const std::string& dir, Trial& t) {
  const int code = m.exit_code.value_or(0);
  const std::string err = dir + "/stderr.log";
  if (interrupted) {
    t.outcome = Outcome::kInterrupted;
    t.note = "interrupted (Ctrl-C)";
  } else if (m.stopped == "duration") {
    t.outcome = Outcome::kTimeout;
    t.note = "still running after " + std::to_string(static_cast<int>(o.timeout_s)) +
             " s: its process group was killed (--timeout)";
  } else if (m.stopped == "early") {
    t.outcome = Outcome::kEarlyStop;
    t.note = "stopped early: below " + std::to_string(static_cast<int>(100 * o.early_stop)) + "% of the best so far";
  } else if (m.stopped == "oom") {
    t.outcome = Outcome::kOom;
    t.note = "out of memory (stopped once it said so): " + last_line(slurp(err));
  } else if (m.stopped.empty() && code != 0) {
    t.outcome = oom_said ? Outcome::kOom : Outcome::kFailed;
    t.note = (oom_said ? "out of memory: " : "exited with " + std::to_string(code) + ": ") + last_line(slurp(err));
  } else if (!t.throughput) {
    t.outcome = Outcome::kNoMetric;
    t.note = o.metric ? "printed no line that --metric matches (see " + dir + "/stdout.log)"
                      : "no steps found in its trace (NVTX 'step N' ranges or repeating GPU work)";
  } else {
    t.outcome = Outcome::kOk;
  }
}

}  // namespace

std::vector<double> scan_values(const std::string& text, const Pattern& re) {
  std::vector<double> values;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (auto v = number_in(line, re)) values.push_back(*v);
  }
  return values;
}

bool says_out_of_memory(const std::string& text) {
  for (const char* s : {"CUDA out of memory", "OutOfMemoryError", "CUDA error: out of memory", "RESOURCE_EXHAUSTED",
                        "CUBLAS_STATUS_ALLOC_FAILED"}) {
    if (text.find(s) != std::string::npos) return true;
  }
  return false;
}

std::optional<double> measured_median(const std::vector<double>& values, int warmup, int* count) {
  if (values.empty()) return std::nullopt;
  const size_t skip = values.size() > static_cast<size_t>(warmup) ? static_cast<size_t>(warmup) : 0;
  std::vector<double> v(values.begin() + static_cast<long>(skip), values.end());
  std::sort(v.begin(), v.end());
  if (count != nullptr) *count = static_cast<int>(v.size());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Trial run_trial(const RunnerOptions& o, const std::vector<std::string>& argv, int id, std::optional<double> best,
                std::optional<double> batch) {
  Trial t;
  t.id = id;
  const std::string dir = o.dir + "/trial-" + std::to_string(id);
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  live::MonitorOptions mo = monitor_options(o, argv, dir);
  TrialWatch watch(o, mo, best);
  mo.stop_check = [&watch] { return watch.check(); };
  auto m = live::monitor(mo);
  if (!m.ok()) {
    t.outcome = Outcome::kFailed;
    t.note = m.status().message();
    return t;
  }
  const std::vector<double> values = watch.finish();
  t.seconds = m->elapsed_s;
  t.exit_code = m->exit_code;
  t.recording = m->dir;
  const std::string text = slurp(mo.stdout_path) + "\n" + slurp(mo.stderr_path);
  if (o.memory) {
    if (const std::vector<double> mem = scan_values(text, *o.memory); !mem.empty()) {
      t.peak_memory_bytes = *std::max_element(mem.begin(), mem.end()) * 1024 * 1024;
      t.memory_source = "program";
    }
  }
  if (o.metric) t.throughput = measured_median(values, o.warmup, &t.measured);
  const int code = m->exit_code.value_or(0);
  const bool interrupted = m->interrupted || (m->stopped.empty() && code == 128 + SIGINT);
  if (!interrupted) read_recording(o, m->dir, batch, t);
  classify(o, m.value(), interrupted, says_out_of_memory(text), dir, t);
  return t;
}

}  // namespace chokepoint::tune
