// Per-process and per-thread signals of the watched process tree.
//
// The tree: the root PIDs and every descendant, found by scanning /proc/*/stat for
// ppid (this kernel, like many, lacks /proc/PID/task/TID/children). A scan reads only
// PIDs it has not judged before, and runs every `discovery_interval_ns`, so DataLoader
// workers and torchrun ranks join within that interval and leave when their stat file
// goes away (or turns zombie).
//
// Cost (what keeps a tick well under 1 ms): every tick reads, per process, stat (CPU,
// threads, RSS) and io through held descriptors (proc_fs.h). Threads are many (a
// PyTorch rank has 50+), so each tick visits only `thread_visits_per_tick` of them in
// round robin (stat: state and CPU; schedstat: run-queue wait; status: voluntary and
// involuntary switches) and each thread's rates are over its own visit interval.
// Per-process switch and run-queue figures are sums of the threads' latest rates:
// the kernel keeps those counters per thread only (/proc/PID/status and schedstat show
// the main thread alone). The task list is re-read when stat's thread count changes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sampler/proc/proc_fs.h"
#include "sampler/proc/proc_parsers.h"
#include "samples/clock.h"
#include "samples/metadata.h"
#include "samples/series.h"

namespace chokepoint::sampler::proc {

struct ProcessSamplerOptions {
  std::vector<int64_t> roots;  // the launched (or attached) PIDs
  // PIDs never adopted, nor their children: chokepoint itself (and so its py-spy), which
  // is a descendant of the watched process when `watch --pid` names the shell it runs in.
  std::vector<int64_t> exclude;
  int64_t clock_ticks_per_s = 100;  // sysconf(_SC_CLK_TCK): the unit of utime/stime
  int64_t page_size = 4096;
  int64_t discovery_interval_ns = 1'000'000'000;
  // ~20 us each (stat, schedstat, status) on the dev VM: see docs/BENCHMARKS.md. Eight a
  // tick revisits each thread of a 50-thread rank every 0.6 s at 100 ms, and keeps the
  // whole sampler under 1% of a core on the H200 (16 did not, with one GPU).
  size_t thread_visits_per_tick = 8;
  bool per_thread_series = true;  // emit thread.* series (the process sums always come)
};

// Options for this machine: clock ticks and page size from sysconf.
ProcessSamplerOptions live_process_options(std::vector<int64_t> roots);

struct TreeEvents {
  std::vector<samples::ProcessMeta> appeared;  // new processes, or a role that changed
  std::vector<int64_t> exited;
};

class ProcessSampler {
 public:
  ProcessSampler(ProcFs& fs, ProcessSamplerOptions options) : fs_(fs), opt_(std::move(options)) {}

  void sample(const samples::TickTime& now, samples::Tick& out, TreeEvents* events = nullptr);

  // Every process ever seen in the tree (live and exited), by PID.
  const std::map<int64_t, samples::ProcessMeta>& processes() const { return history_; }
  std::vector<int64_t> live_pids() const;
  bool tree_alive() const { return !live_.empty(); }

 private:
  struct ThreadState {
    char state = '?';
    uint64_t cpu_ticks = 0;
    SchedStat sched;
    std::optional<uint64_t> voluntary, involuntary;
    int64_t visited_mono_ns = -1;
    bool has_rates = false;
    double voluntary_per_s = 0, involuntary_per_s = 0, runq_ns_per_s = 0;
  };
  struct ProcState {
    int64_t last_mono_ns = -1;
    uint64_t cpu_ticks = 0;
    IoStat io;
    int64_t num_threads = 0;
    std::map<int64_t, ThreadState> threads;
  };

  void discover(const samples::TickTime& now, TreeEvents* events);
  void adopt(int64_t pid, const TaskStat& stat, bool is_root, const samples::TickTime& now, TreeEvents* events);
  void retire(int64_t pid, const samples::TickTime& now, TreeEvents* events);
  void read_rank(int64_t pid, samples::ProcessMeta& m);
  void list_threads(int64_t pid, ProcState& p);
  void sample_process(int64_t pid, ProcState& p, const samples::TickTime& now, samples::Tick& out, TreeEvents* events);
  void visit_threads(const samples::TickTime& now, samples::Tick& out);
  void visit_thread(int64_t pid, int64_t tid, ThreadState& t, const samples::TickTime& now, samples::Tick& out);
  void emit_process_sums(int64_t pid, const ProcState& p, samples::Tick& out) const;

  ProcFs& fs_;
  ProcessSamplerOptions opt_;
  std::string buf_;
  std::map<int64_t, ProcState> live_;
  std::map<int64_t, samples::ProcessMeta> history_;
  std::set<int64_t> outsiders_;  // PIDs judged not in the tree, until they disappear
  std::set<int64_t> gone_;       // exited (or zombie) tree PIDs still listed in /proc
  int64_t last_discovery_ns_ = -1;
  // Round robin over (pid, tid): the next thread to visit is the first after this one.
  std::pair<int64_t, int64_t> cursor_{-1, -1};
};

}  // namespace chokepoint::sampler::proc
