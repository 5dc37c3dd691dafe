// What one `chokepoint serve` page shows: the node's latest readings and each job's
// diagnosis over its rolling window, as plain values. The sampling thread builds one
// after every tick (node_sampler.h); exposition.h turns it into the Prometheus page.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "samples/metadata.h"
#include "samples/metric.h"

namespace chokepoint::serve {

// The latest valid reading of each metric (an invalid one is absent, never 0).
using Readings = std::map<samples::MetricId, double>;

struct GpuSnapshot {
  samples::GpuMeta meta;  // index, name, uuid, bus id
  Readings values;
};

struct ProcessSnapshot {
  int64_t pid = 0;
  std::string comm;
  samples::ProcessRole role = samples::ProcessRole::kChild;
  std::optional<int> rank;
  Readings values;                           // proc.* metrics
  std::optional<uint64_t> gpu_memory_bytes;  // NVML, summed over the GPUs it runs on
};

struct FindingSnapshot {
  std::string id;
  std::string category;
  std::string severity;
  std::optional<double> estimated_speedup;
  std::string remedy;  // whose estimate it is (Finding::estimate_remedy)
};

struct JobSnapshot {
  int64_t pid = 0;      // the job's root process
  std::string name;     // the script (python x.py) or comm
  std::string command;  // argv joined by spaces
  std::optional<int> rank;
  std::vector<unsigned> gpus;              // GPU indexes running its processes
  std::vector<ProcessSnapshot> processes;  // busiest first, capped
  size_t processes_not_shown = 0;
  // The last diagnosis of its window (absent until the first one).
  bool diagnosed = false;
  double window_s = 0;
  std::string bound = "unknown";
  double confidence = 0;
  std::string summary;
  std::vector<FindingSnapshot> findings;
};

struct NodeSnapshot {
  std::string hostname;
  std::string version;
  int64_t time_ns = 0;  // CLOCK_REALTIME of the tick
  // GPUs: empty with a reason when NVML did not load or sees none.
  std::vector<GpuSnapshot> gpus;
  std::string gpu_unavailable;
  std::string driver_version;
  Readings host;
  std::optional<double> host_mem_total_bytes;
  int host_cpus = 0;
  std::vector<JobSnapshot> jobs;
  // The exporter itself.
  uint64_t ticks = 0;
  uint64_t diagnoses = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_dropped = 0;  // jobs seen but not followed (over --max-jobs)
  double tick_seconds = 0;    // CPU-free wall time the last tick took
  double diagnosis_seconds = 0;
  double interval_s = 0;
  double window_s = 0;
};

}  // namespace chokepoint::serve
