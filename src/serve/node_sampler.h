// The sampling side of `chokepoint serve`: the host's /proc signals, every GPU through
// NVML/GPM (sampler/gpu) and the jobs on the node, one tick at a time on the serve
// thread; after each tick it can hand out a NodeSnapshot (snapshot.h).
//
// Jobs. A job is a process tree: a process NVML lists on a GPU, or its torchrun agent
// when it is a rank (so the ranks and their DataLoader workers form one job), or a PID
// named with --pid (a CPU-only job, and what CI watches). Each job has its own process
// sampler (sampler/proc, the one `run` and `watch` use) and leaves when its tree exits.
// Jobs beyond `max_jobs` are counted, not followed.
//
// Diagnosis. Each job keeps the last `window_ns` of ticks (its processes' samples; the
// host's and GPUs' are shared). Every `diagnose_interval_ns` that window becomes an
// in-memory recording, analysed and diagnosed by the same code as `run`/`watch`
// (analyses/sampled, rules/diagnose_samples): its verdict and active findings go into the
// snapshot. Memory is bounded: ticks older than the window are dropped, the number of
// jobs is capped, and a job's sampler is rebuilt when its list of processes ever seen
// grows past `max_processes_seen`.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "sampler/gpu/gpu_sampler.h"
#include "sampler/nvml/nvml.h"
#include "sampler/proc/host_sampler.h"
#include "sampler/proc/proc_fs.h"
#include "sampler/proc/process_sampler.h"
#include "samples/series.h"
#include "serve/snapshot.h"

namespace chokepoint::serve {

struct NodeOptions {
  int64_t interval_ns = 1'000'000'000;
  int64_t window_ns = 60'000'000'000;
  int64_t diagnose_interval_ns = 5'000'000'000;
  size_t max_jobs = 32;
  size_t max_processes_shown = 16;  // per job, busiest first
  size_t max_processes_seen = 512;  // per job, before its sampler is rebuilt
  std::vector<int64_t> pids;        // --pid: jobs followed whether or not they use a GPU
  bool gpu = true;                  // false: NVML is not loaded (--no-gpu)
  std::string proc_root;            // "" live /proc; tests may point at a fixture
};

class NodeSampler {
 public:
  static std::unique_ptr<NodeSampler> start(const NodeOptions& options);
  ~NodeSampler();

  // Samples host, GPUs and jobs at `now`; diagnoses the jobs that are due.
  void tick(const samples::TickTime& now);
  NodeSnapshot snapshot() const;

 private:
  struct Job {
    int64_t root = 0;
    bool named = false;  // --pid
    std::unique_ptr<sampler::proc::ProcessSampler> procs;
    std::deque<samples::Tick> ticks;     // its processes' samples over the window
    std::map<int64_t, Readings> latest;  // per live process
    std::set<unsigned> gpus;
    int64_t last_diagnosis_ns = -1;
    JobSnapshot diagnosis;  // verdict part of the last diagnosis
  };
  NodeSampler() = default;
  void sample_gpu_processes();
  void discover_jobs();
  void add_job(int64_t root, bool named);
  std::unique_ptr<sampler::proc::ProcessSampler> make_process_sampler(int64_t root) const;
  int64_t job_root_of(int64_t pid);
  void diagnose(Job& job, int64_t now_ns);
  JobSnapshot job_snapshot(const Job& job) const;

  NodeOptions opt_;
  NodeSnapshot base_;  // hostname, version, host facts
  std::unique_ptr<sampler::proc::ProcFs> fs_;
  std::unique_ptr<sampler::proc::HostSampler> host_;
  std::unique_ptr<nvml::Nvml> nvml_;
  std::unique_ptr<sampler::gpu::GpuSampler> gpus_;
  std::vector<samples::GpuMeta> gpu_meta_;
  std::map<int64_t, std::set<unsigned>> gpu_pids_;  // PID -> GPUs it runs on (this tick)
  std::map<int64_t, uint64_t> gpu_pid_memory_;      // PID -> device memory, summed over GPUs
  std::deque<samples::Tick> node_ticks_;            // host and GPU samples over the window
  std::map<std::pair<samples::MetricId, samples::Entity>, double> node_latest_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::set<int64_t> dropped_roots_;  // counted once each (bounded)
  samples::TickTime last_tick_{};
  std::string buf_;
  uint64_t ticks_ = 0, diagnoses_ = 0, jobs_started_ = 0, jobs_dropped_ = 0;
  double tick_seconds_ = 0, diagnosis_seconds_ = 0;
};

// A job's short name: the script or module a Python interpreter runs ("train.py",
// "-m torch.distributed.run" -> "torch.distributed.run"), else argv[0]'s base name, else comm.
std::string job_name(const std::vector<std::string>& argv, const std::string& comm);

}  // namespace chokepoint::serve
