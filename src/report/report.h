// The report: everything a reporter renders, already computed. Built by pipeline/ from
// the analyses and the findings; reporters only format it (one file per format).
// The JSON reporter maps it onto the contract in docs/ARCHITECTURE.md ("Report contract").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyses/distributed/cross_rank.h"
#include "analyses/fingerprint.h"
#include "analyses/stacks/hotspots.h"
#include "rules/finding.h"
#include "rules/remedies.h"
#include "timeline/import_stats.h"

namespace chokepoint::report {

inline constexpr const char* kSchema = "chokepoint.report/1";

struct InputInfo {
  std::string path;
  std::string format;  // "kineto"
  uint64_t bytes = 0;  // size on disk
  int64_t events = 0;  // events imported into the model
};

// The ceilings the analyses divided by, and where they came from.
struct Ceilings {
  std::string source;                 // "published:H200 SXM" | "profile:<file>" | "unknown"
  std::optional<double> hbm_gbps;     // device memory bandwidth, GB/s
  std::optional<double> pcie_gbps;    // host<->device per direction, achievable, GB/s
  std::optional<double> fp32_tflops;  // non-tensor FP32
  std::optional<double> tf32_tflops;  // tensor cores
  std::optional<double> bf16_tflops;  // tensor cores (and FP16)
  std::optional<double> fp8_tflops;   // tensor cores
  std::optional<double> fp4_tflops;   // tensor cores
  std::optional<double> int8_tops;    // tensor cores, TOP/s
  std::optional<double> l2_mb;
  std::string gpu;   // the published GPU matched: "H100 SXM MIG 3g.40gb", "" none
  std::string note;  // how published figures were scaled (MIG) or assumed
  // Figures the analyses needed and lack ("HBM bandwidth"), and how to supply them.
  std::vector<std::string> missing;
  std::string missing_hint;
};

struct DeviceInfo {
  std::string name;  // "NVIDIA H200" or "" when the trace has none
  int32_t num_sms = -1;
  int64_t memory_bytes = -1;
  std::string compute_capability;  // "9.0"
  Ceilings ceilings;
};

struct Distribution {
  double mean = 0, p50 = 0, p95 = 0, min = 0, max = 0;
};

// A named share of step time (or of GPU busy time), with absolute ms per step.
struct Share {
  std::string name;
  double pct = 0;
  double ms_per_step = 0;
};

// One profiler window of a process (issue 44): torch.profiler with a repeating schedule
// writes each window to its own file (tensorboard_trace_handler); the report pools their
// steps and lists each window's apart, so a window unlike the others shows.
struct ProfilerWindow {
  std::string path;
  int64_t steps = 0;
  int64_t first_step = 0, last_step = 0;  // step numbers (ProfilerStep#N)
  Distribution step_time_ms;
  double gpu_busy_pct = 0;  // of its steps' time
};

struct Window {
  int64_t steps = 0;
  std::string step_source;  // "ProfilerStep#N annotations" | "whole trace (no step annotations)"
  Distribution step_time_ms;
  double analyzed_ms = 0;  // total time of the analyzed windows
  std::vector<int64_t> step_numbers;
  std::vector<double> step_ms;  // each step's time, in step_numbers' order (empty without steps)
  // Each step's GPU busy time by kernel class, then idle time by cause ("idle:<cause>"),
  // ms, in step_numbers' order (the HTML report's bars per step).
  std::vector<std::vector<Share>> step_parts;
  // Set when the steps come from two files or more of one process (windows of one job).
  std::vector<ProfilerWindow> profiler_windows;
};

struct Breakdown {
  double gpu_busy_pct = 0;  // union of GPU ops over the analyzed windows
  double gpu_idle_pct = 0;
  std::vector<Share> idle_by_cause;   // % of step time: input, launch_overhead, sync, ...
  std::vector<Share> busy_by_class;   // % of step time: gemm, conv, elementwise, memcpy ...
  std::vector<Share> category_costs;  // % of step time per bottleneck category (the verdict's basis)
};

struct KernelRow {
  std::string name;          // shortened for display by reporters if needed
  std::string kernel_class;  // "gemm", "elementwise", ...
  std::string precision;     // "fp32", "tf32", "bf16", ... or ""
  std::optional<bool> tensor_cores;
  int64_t calls = 0;
  double total_ms = 0;  // over the analyzed windows
  double pct_of_busy = 0;
};

struct Verdict {
  rules::Category bound = rules::Category::kUnknown;
  double confidence = 0;              // 0..1 (rules/diagnose.h says what it means)
  std::string summary;                // one sentence
  std::string unknown_reason;         // why the bound is unknown, when it is
  std::optional<DataLoss> data_lost;  // the largest share of input lost (rules/diagnose.h)
};

// One kernel class on this machine's roofline: what it achieved against the ceilings.
struct RooflineClass {
  std::string kernel_class;  // "gemm", "elementwise", ...
  int64_t kernels = 0;
  double ms_per_step = 0;
  double pct_of_step = 0;
  std::optional<double> achieved_tflops;  // where the ops recorded shapes
  std::optional<double> pct_of_peak;      // of the peak of the precision it ran in
  std::optional<double> achieved_gbps;
  std::optional<double> pct_of_hbm;
  std::string bound;  // "compute", "memory", "mixed", "" unknown
};

// How well the recorded steps replay, and what the what-ifs start from.
struct Replay {
  int64_t steps = 0;
  double recorded_step_ms = 0;  // as recorded (the profiler's cost included)
  double replayed_step_ms = 0;  // replayed as recorded: the replay's own error
  double plain_step_ms = 0;     // replayed without the recorder's cost
  std::string recorder;         // whose cost was taken out, "" none known
};

// What a live recording (`run` / `watch`) saw, for reports built from samples. Means and
// 95th percentiles over each GPU's active window (from its first to its last busy tick)
// and over the whole run for the host and processes. Absent values were not sampled or
// not supported (never 0).
struct LiveStat {
  double mean = 0, p95 = 0, max = 0;
};

struct LiveGpu {
  unsigned index = 0;
  std::string name;
  bool used = false;
  double active_s = 0;
  std::optional<double> first_work_s;  // seconds from the recording's start to its first active tick
  std::optional<LiveStat> util_pct, sm_active_pct, sm_occupancy_pct, tensor_active_pct, dram_active_pct;
  std::optional<LiveStat> pcie_rx_bytes_per_s, pcie_tx_bytes_per_s, power_w, sm_clock_mhz;
  std::optional<double> memory_used_max_bytes, memory_total_bytes, power_limit_w;
  std::optional<double> link_gen_seen, link_width_seen, link_gen_max, link_width_max;
  std::vector<std::pair<std::string, double>> clock_reasons;  // name, share of active time (0..1)
};

struct LiveProcess {
  int64_t pid = 0;
  std::string comm;
  std::string role;                 // "launched", "dataloader_worker", ...
  std::optional<LiveStat> cpu_pct;  // 100 = one core
  std::optional<double> threads_running_mean;
  int64_t threads_seen = 0;
};

struct LiveHost {
  int cpus = 0;
  std::optional<LiveStat> user_pct, system_pct, iowait_pct, steal_pct, procs_running, ctx_switches_per_s;
  std::optional<LiveStat> swap_in_pages_per_s, swap_out_pages_per_s, psi_cpu_some, psi_memory_some, psi_io_some;
};

// One sampled metric over the run for charts (the HTML report): the mean of its valid
// samples in each of LiveSummary::series_bucket_s buckets from the first tick; NaN where
// the bucket holds none (a gap, never a 0).
struct LiveSeries {
  std::string group;  // one chart per group: "GPU 0 activity", "Host CPU", ...
  std::string name;   // "SM active"
  std::string unit;   // "%", "GB/s"
  std::vector<double> values;
};

struct LiveSummary {
  std::string recording;             // directory
  std::vector<std::string> command;  // empty for watch
  std::optional<int> exit_code;
  bool complete = true;  // false: chokepoint did not finish the recording
  double duration_s = 0;
  int64_t ticks = 0;
  double interval_ms = 0;
  std::string gpu_note;         // how GPUs were matched, when not by PID
  std::string gpu_unavailable;  // why there are no GPU metrics
  std::vector<LiveGpu> gpus;
  LiveHost host;
  int64_t processes_seen = 0;
  double tree_cpu_pct_mean = 0;
  std::vector<LiveProcess> top_processes;  // busiest first
  std::vector<LiveSeries> series;          // over time, for charts
  double series_bucket_s = 0;
};

// The median step drawn as a strip (the HTML report): the launching thread, each GPU
// stream and each device's idle gaps by cause; times in ms from the step's start.
// Neighbouring spans of one kind closer than half a pixel of a 1000-wide strip are one.
struct StripSpan {
  double start_ms = 0, end_ms = 0;
  std::string kind;   // kernel class, "idle:<cause>", or the thread's "dataloader", "sync", ...
  std::string label;  // the first kernel's name, "" for others
};

struct StripLane {
  std::string name;  // "CPU thread 10", "GPU 0 stream 7", "GPU 0 idle"
  std::vector<StripSpan> spans;
};

struct StepStrip {
  int64_t step_number = 0;
  double duration_ms = 0;
  std::vector<StripLane> lanes;
};

// A distributed job's ranks side by side (analyses/distributed/cross_rank.h): set when
// `analyze` was given the traces of two ranks or more. The rest of the report details one
// rank's trace: the straggler's when there is one, else the lowest rank's.
struct Distributed {
  analyses::distributed::DistributedAnalysis ranks;
  std::vector<std::string> rank_paths;  // in the order of ranks.ranks
  std::vector<std::string> domains;     // the clock domains' paths (nodes), by index
  int32_t detailed_rank = -1;
  double summarize_seconds = 0;  // wall time of the per-rank pass (--timings)
  int workers = 0;               // ranks analyzed at once
};

struct Report {
  std::string tool_version;
  std::vector<InputInfo> inputs;
  std::vector<DeviceInfo> devices;  // devices[0] is the "device" of the JSON contract
  Window window;
  Breakdown breakdown;
  Verdict verdict;
  std::vector<rules::Finding> findings;       // ranked: the headline remedy's first
  std::vector<rules::RemedyAdvice> remedies;  // ranked: the headline first
  // Remedies the trace shows already on (CUDA graphs, a fused optimizer, torch.compile):
  // not advised, and said so (issue 43: reports advised what was in place).
  std::vector<std::string> already_on;
  // Every remedy the trace was replayed with, whether a finding asked for it or not (a
  // what-if that gains nothing is worth knowing too), largest gain first.
  std::vector<rules::RemedyAdvice> what_ifs;
  std::vector<KernelRow> top_kernels;
  std::vector<RooflineClass> roofline;  // per kernel class, most time first
  std::optional<double> mfu_pct;        // model FLOPs utilization (recorded GEMM FLOPs)
  std::string mfu_precision;
  std::optional<Replay> replay;
  std::vector<timeline::ImportStat> import_stats;  // non-zero ones
  double analysis_seconds = 0;                     // wall time of import + analysis
  std::optional<LiveSummary> live;                 // set for reports built from live samples
  // Host hot spots from the job's Python stacks (run with py-spy), and why there are none.
  std::optional<analyses::HostAttribution> host;
  int64_t host_steps = 0;
  std::string stacks_note;
  std::optional<StepStrip> median_step;  // trace inputs with steps
  std::optional<Distributed> distributed;
  analyses::Fingerprint fingerprint;  // what the job is (diff's same-job check)
};

}  // namespace chokepoint::report
