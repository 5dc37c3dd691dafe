// One live sampling session: the /proc host and process-tree samplers and, where NVML
// loads, the GPU sampler, driven one tick at a time into a recording directory
// (samples/recording_writer.h). `run` and `watch` own the loop and the clock; the
// session only samples, records and keeps the latest value of every series for the
// live view.
//
// Cadence (defaults; the CPU cost of each is in docs/BENCHMARKS.md): /proc every tick
// (`interval_ns`, 100 ms); NVML classic readings every `gpu_interval_ns` (200 ms); GPM
// activity from snapshot pairs `gpm_interval_ns` apart (1 s: a GPM metrics call costs
// ~1.6 ms of CPU per GPU on the H200, and the pair averages the whole second, so nothing
// is missed, only resolution). GPU-to-workload matching every second.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "sampler/gpu/gpu_sampler.h"
#include "sampler/nvml/nvml.h"
#include "sampler/proc/host_sampler.h"
#include "sampler/proc/proc_fs.h"
#include "sampler/proc/process_sampler.h"
#include "samples/clock.h"
#include "samples/metadata.h"
#include "samples/recording_writer.h"
#include "samples/series.h"

namespace chokepoint::live {

struct SessionOptions {
  std::string out_dir;               // recording directory (created)
  bool replace = false;              // replace a recording already in out_dir (--force)
  std::vector<std::string> command;  // what `run` launched; empty for `watch`
  std::vector<int64_t> roots;        // process tree roots; empty: no tree
  int64_t interval_ns = 100'000'000;
  int64_t gpu_interval_ns = 200'000'000;
  int64_t gpm_interval_ns = 1'000'000'000;
  bool gpu = true;        // false: do not load NVML (--no-gpu)
  std::string proc_root;  // "" live /proc; tests may point at a fixture
};

// The newest valid (or invalid) reading of each series, for the live view.
struct Latest {
  struct Key {
    samples::MetricId metric;
    samples::Entity entity;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, samples::Sample> values;
  std::optional<double> get(samples::MetricId m, const samples::Entity& e) const;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> start(const SessionOptions& options);
  ~Session();

  // Watches the tree rooted at `pid` from now on (run: the child, started after the
  // recording directory exists so that a bad -o never leaves an orphan running).
  Status add_root(int64_t pid);
  // Samples everything due at `now` and appends the tick to the recording.
  Status tick(const samples::TickTime& now);
  // Writes the final meta.json (end time, exit code, processes, GPU use).
  Status finish(std::optional<int> exit_code);
  // Nothing was recorded (the command could not start): removes the recording's files, and
  // its directory when start() created it, so that a retry with the same -o is not refused.
  void discard();

  const samples::RunMeta& meta() const { return meta_; }
  // What the Python stack sampling recorded (live/stack_sampling.h), and its CPU cost.
  void set_stacks(samples::StacksMeta s) { meta_.stacks = std::move(s); }
  void add_sampler_cpu_ms(const std::string& part, double ms) { meta_.sampler_cpu_ms[part] += ms; }
  const Latest& latest() const { return latest_; }
  // The ticks of the last kRecentNs (the live verdict's window), oldest first.
  static constexpr int64_t kRecentNs = 60'000'000'000;
  const std::deque<samples::Tick>& recent_ticks() const { return recent_; }
  const std::map<int64_t, samples::ProcessMeta>& processes() const;
  bool tree_alive() const;
  int64_t ticks() const { return ticks_; }
  const std::string& dir() const { return writer_->dir(); }
  // CPU time this process has used since the end of the first tick, seconds: the
  // sampler's steady cost. Loading NVML and the first tick are startup_cpu_s().
  double own_cpu_s() const;
  double startup_cpu_s() const { return startup_cpu_s_; }
  // Why GPU metrics are unavailable ("" when they are sampled).
  const std::string& gpu_unavailable() const { return meta_.gpu_unavailable; }

 private:
  Session() = default;
  void match_gpus();
  // Whether the command's tree held an NVIDIA device open at some match: true once seen,
  // false while only seen without, nullopt while never read (match_gpus keeps it, so the
  // last match, after the tree exited, still knows).
  std::optional<bool> tree_held_gpu_;

  SessionOptions opt_;
  samples::RunMeta meta_;
  std::unique_ptr<samples::RecordingWriter> writer_;
  std::unique_ptr<sampler::proc::ProcFs> fs_;
  std::unique_ptr<sampler::proc::HostSampler> host_;
  std::unique_ptr<sampler::proc::ProcessSampler> procs_;
  std::unique_ptr<nvml::Nvml> nvml_;
  std::unique_ptr<sampler::gpu::GpuSampler> gpus_;
  Latest latest_;
  samples::Tick tick_;
  std::deque<samples::Tick> recent_;
  int64_t ticks_ = 0;
  int64_t last_gpu_ns_ = -1;
  int64_t last_match_ns_ = -1;
  int64_t last_meta_ns_ = -1;
  double cpu_at_start_s_ = 0;
  double cpu_after_first_tick_s_ = -1;
  double startup_cpu_s_ = 0;
};

// Host facts for meta.json: hostname, kernel, cpus, mem_total_bytes, numa_nodes.
std::map<std::string, std::string> host_facts();

}  // namespace chokepoint::live
