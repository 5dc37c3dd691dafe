// Test helper: builds small synthetic live recordings (what `chokepoint run` writes) for
// unit tests of the live analyses and the sample rules. Ticks are `interval_ns` apart
// from kT0; each series is filled tick by tick from a function of the tick number.
// Header-only; used by *_test.cc files only.
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "samples/recording_reader.h"

namespace chokepoint::testing {

class RecordingBuilder {
 public:
  static constexpr int64_t kT0 = 1'700'000'000'000'000'000;
  static constexpr int64_t kLaunchedPid = 1000;

  explicit RecordingBuilder(int ticks = 60, int64_t interval_ns = 100'000'000)
      : ticks_(ticks), interval_ns_(interval_ns) {
    rec_.meta.start_ns = kT0;
    rec_.meta.end_ns = t(ticks - 1);
    rec_.meta.interval_ns = interval_ns;
    rec_.meta.pid = kLaunchedPid;
    rec_.meta.command = {"python3", "train.py"};
    rec_.complete = true;
    rec_.ticks = static_cast<uint64_t>(ticks);
  }

  int ticks() const { return ticks_; }
  int64_t interval_ns() const { return interval_ns_; }
  int64_t t(int i) const { return kT0 + static_cast<int64_t>(i) * interval_ns_; }

  // A GPU judged used by the workload.
  samples::GpuMeta& gpu(unsigned index, std::string name = "NVIDIA H200") {
    samples::GpuMeta g;
    g.index = index;
    g.name = std::move(name);
    g.used = true;
    rec_.meta.gpus.push_back(std::move(g));
    return rec_.meta.gpus.back();
  }

  // A process of the tree, seen for the whole run; a Python interpreter by default.
  samples::ProcessMeta& process(int64_t pid, samples::ProcessRole role, std::string comm = "python3") {
    samples::ProcessMeta p;
    p.pid = pid;
    p.ppid = role == samples::ProcessRole::kLaunched ? 1 : kLaunchedPid;
    p.cmdline = {comm, "train.py"};
    p.comm = std::move(comm);
    p.role = role;
    p.first_seen_ns = t(0);
    p.last_seen_ns = t(ticks_ - 1);
    rec_.meta.processes.push_back(std::move(p));
    return rec_.meta.processes.back();
  }

  void host_fact(const std::string& key, const std::string& value) { rec_.meta.host[key] = value; }

  // Value at tick i: nullopt = not sampled at that tick, NaN = sampled but invalid.
  using Fn = std::function<std::optional<double>(int)>;

  RecordingBuilder& series(samples::MetricId m, const samples::Entity& e, const Fn& f) {
    const samples::SeriesIndex s = rec_.samples.series_index(m, e);
    for (int i = 0; i < ticks_; ++i) {
      const std::optional<double> v = f(i);
      if (!v) continue;
      rec_.samples.append(s, t(i), std::isnan(*v) ? 0.0 : *v, !std::isnan(*v));
    }
    return *this;
  }
  RecordingBuilder& constant(samples::MetricId m, const samples::Entity& e, double v) {
    return series(m, e, [v](int) { return std::optional<double>(v); });
  }

  const samples::Recording& rec() const { return rec_; }
  samples::Recording& rec() { return rec_; }

 private:
  int ticks_;
  int64_t interval_ns_;
  samples::Recording rec_;
};

}  // namespace chokepoint::testing
