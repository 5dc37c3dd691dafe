// Analyses of a live recording (`chokepoint run` / `watch`): pure functions from the
// samples model (samples/series.h, samples/metadata.h) to plain summaries that the
// sample rules read (rules/ evaluate_samples), the way analyses/analysis.h serves the
// trace rules.
//
// Windows. A run starts with seconds of Python imports and CUDA initialisation where
// the GPU does nothing, and may end with a save or an evaluation pass. GPU figures are
// therefore taken over each GPU's *active window*: from the first to the last tick where
// it was at least half as busy as usual (nvidia-smi utilization, or GPM SM activity when
// utilization is unavailable; "usual" is the 90th percentile of the non-zero readings).
// Host and process figures cover the whole run.
//
// Sparse series. GPM metrics arrive every other tick at most, threads are visited in
// round robin: per-tick questions ("was the GPU idle while the loader was saturated at
// this instant?") use held(): the latest valid value no older than `max_age_ns`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "samples/metadata.h"
#include "samples/recording_reader.h"
#include "samples/series.h"

namespace chokepoint::analyses::sampled {

// Order statistics of the valid samples of one series inside a window.
struct Stat {
  int64_t n = 0;
  double mean = 0, p50 = 0, p95 = 0, min = 0, max = 0;
};
// nullopt when the series is absent or has no valid sample in [start_ns, end_ns].
std::optional<Stat> stat_of(const samples::Series* s, int64_t start_ns, int64_t end_ns);
// Share (0..1) of the valid samples in the window that satisfy value >= threshold.
std::optional<double> share_at_least(const samples::Series* s, double threshold, int64_t start_ns, int64_t end_ns);
// The latest valid value at or before t_ns, no older than max_age_ns.
std::optional<double> held(const samples::Series* s, int64_t t_ns, int64_t max_age_ns);
// The series that says whether GPU `gpu_index` ran anything: nvidia-smi utilization when
// it has a valid sample, else GPM SM activity (what active windows are made from).
// A PSI series of the host: the per-interval share (host.psi_*_pct, from the kernel's
// totals) where the recording has it, else the kernel's 10 s average (avg10), which
// lags: a burst of I/O at start-up stays in avg10 for ten more seconds.
const samples::Series* psi_series(const samples::SampleStore& st, samples::MetricId pct, samples::MetricId avg10);
const samples::Series* activity_series(const samples::SampleStore& st, int64_t gpu_index);

struct ClockReasonShare {
  uint64_t bit = 0;
  std::string name;  // samples::clock_event_reasons() name, e.g. "sw_power_cap"
  double share = 0;  // of the active ticks with a valid reading
};

struct GpuLive {
  unsigned index = 0;
  std::string name;
  bool used = false;                                 // judged used by the workload (meta)
  bool has_metrics = false;                          // at least one valid GPU sample
  int64_t active_start_ns = -1, active_end_ns = -1;  // -1: never active
  int64_t active_ticks = 0;
  double active_s() const {
    return active_start_ns < 0 ? 0 : (static_cast<double>(active_end_ns) - static_cast<double>(active_start_ns)) / 1e9;
  }
  // Over the active window (the whole run when never active).
  std::optional<Stat> util, sm_active, sm_occupancy, tensor_active, dram_active, gr_active;
  std::optional<Stat> pcie_rx, pcie_tx;  // B/s
  std::optional<Stat> power_w, sm_clock_mhz, temperature_c;
  // Over the whole run.
  std::optional<double> mem_used_max_bytes, mem_total_bytes, power_limit_w;
  std::optional<double> link_gen_max, link_width_max;    // device/slot maximum
  std::optional<double> link_gen_seen, link_width_seen;  // best seen while active (links idle down)
  std::vector<ClockReasonShare> clock_reasons;           // bits seen while active, largest share first
};

struct ThreadLive {
  int64_t tid = 0;
  std::string name;         // its comm when the recording has it, "" otherwise
  double cpu_pct_mean = 0;  // over its visits; 100 = one core
  double cpu_pct_p50 = 0;
  int64_t visits = 0;
};

struct ProcessLive {
  samples::ProcessMeta meta;
  bool python = false;  // argv[0] or comm names a Python interpreter
  double seen_s = 0;    // time between its first and last tick
  std::optional<Stat> cpu_pct, threads_running, ctx_involuntary_per_s, ctx_voluntary_per_s, runq_wait_ns_per_s;
  std::optional<Stat> read_bytes_per_s;
  std::vector<ThreadLive> threads;  // visited threads, busiest first
};

struct HostLive {
  int cpu_count = 0;   // from host facts ("cpus"); 0 when unknown
  int numa_nodes = 0;  // from host facts ("numa_nodes"); 0 when unknown
  std::optional<Stat> user_pct, system_pct, iowait_pct, steal_pct, idle_pct;
  std::optional<Stat> procs_running, procs_blocked, ctx_switches_per_s;
  std::optional<Stat> swap_in_per_s, swap_out_per_s, major_faults_per_s;
  std::optional<Stat> psi_cpu_some, psi_mem_some, psi_mem_full, psi_io_some, psi_io_full;
  std::optional<Stat> disk_read_bytes_per_s, mem_available_bytes;
  std::optional<double> mem_total_bytes;  // host facts ("mem_total_bytes")
};

struct LiveAnalysis {
  int64_t start_ns = 0, end_ns = 0;  // first and last tick
  double duration_s = 0;
  int64_t ticks = 0;
  int64_t interval_ns = 0;
  std::vector<int64_t> tick_ns;  // every tick time, ascending
  std::vector<GpuLive> gpus;     // in meta order
  bool gpu_metrics = false;      // some GPU gave a valid sample
  std::string gpu_unavailable;   // meta's reason when no GPU metrics
  HostLive host;
  std::vector<ProcessLive> processes;  // the tree, busiest (mean CPU) first
  double tree_cpu_pct_mean = 0;        // sum over the tree of mean CPU, 100 = one core

  // GPUs to judge: the ones the workload used (all of them when PIDs could not be
  // matched, see RunMeta::gpu_note) that gave metrics. Empty: no GPU to judge.
  std::vector<const GpuLive*> judged_gpus() const;
  const ProcessLive* process(int64_t pid) const;
};

// How busy a GPU was over its active window, 0..100: mean nvidia-smi utilization, else
// mean GPM SM activity; nullopt when it has neither.
std::optional<double> busy_pct(const GpuLive& g);
// The ticks of the GPU's active window (empty when it never ran anything).
std::span<const int64_t> active_ticks(const LiveAnalysis& la, const GpuLive& g);

LiveAnalysis analyze_recording(const samples::Recording& rec);

}  // namespace chokepoint::analyses::sampled
