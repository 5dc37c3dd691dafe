// What the Chrome trace export (chrome_trace.cc) decides before it writes an event: the
// Kineto category names, which sampled series become counters, which tracks hold events
// (so that only those get names), the launch -> GPU op flow links, where a sampled GPU's
// counters go, and the trace's time origin.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyses/steps.h"
#include "samples/recording_reader.h"
#include "timeline/model.h"

namespace chokepoint::exporters::chrome {

std::string_view gpu_op_category(timeline::GpuOpKind k);
// Kineto's category names, so that filters written for PyTorch traces work here too.
std::string_view cpu_category(timeline::CpuCategory c);
// The names Kineto gives its cuda_sync events.
std::string_view sync_name(timeline::SyncKind k);

// The series a trace shows: all but per-thread ones beyond CPU use, which would multiply
// the tracks (five per thread, hundreds of threads under DataLoader workers) while the
// process-level sums already carry them.
bool exported(const samples::Series& s);

// Sampled but unavailable: a gap in the track, never a 0 the viewer would draw as a value.
inline bool has_value(const samples::Series& s, size_t i) { return s.valid[i] && std::isfinite(s.values[i]); }

// "gpu.sm_active" -> "sm_active": the track sits under the GPU (or host, or process)
// already, and its unit becomes the value's key.
std::string_view short_metric_name(std::string_view name);

// Remembers which processes and threads have events, so that names are written for those
// and only those (a name alone would make an empty process in the viewer). Rows come in
// runs of one thread more often than not, so the last key short-circuits the sets.
class TrackSet {
 public:
  void add(int64_t pid, int64_t tid) {
    const std::pair<int64_t, int64_t> k{pid, tid};
    if (k == last_) return;
    last_ = k;
    if (threads_.insert(k).second) pids_.insert(pid);
  }
  void add_process(int64_t pid) { pids_.insert(pid); }
  bool has_process(int64_t pid) const { return pids_.count(pid) > 0; }
  bool has_thread(int64_t pid, int64_t tid) const { return threads_.count({pid, tid}) > 0; }
  // Ordered, so that the metadata comes out in a stable order.
  const std::set<int64_t>& pids() const { return pids_; }
  const std::set<std::pair<int64_t, int64_t>>& threads() const { return threads_; }

 private:
  std::pair<int64_t, int64_t> last_{std::numeric_limits<int64_t>::min(), 0};
  std::set<std::pair<int64_t, int64_t>> threads_;
  std::set<int64_t> pids_;
};

// For each RuntimeCalls row, the GpuOps rows it launched (matched by correlation id, as
// analyses/index.cc does), as offsets into one array: a graph launch starts many ops.
struct LaunchLinks {
  std::vector<uint32_t> begin;  // calls + 1 offsets into ops
  std::vector<uint32_t> ops;
  std::vector<uint8_t> launched;  // per GpuOps row: 1 when a call launched it

  static LaunchLinks build(const timeline::Timeline& tl);
};

// Where a sampled GPU's counters go: NVML index -> trace pid (kChromeGpuPidBase + device
// when the sampled GPUs are the traced ones, else kChromeSampledGpuPidBase + index).
std::map<int64_t, int64_t> sampled_gpu_pids(const timeline::Timeline& tl, const samples::Recording& rec);

// "GPU 0 (NVIDIA H200)".
std::string gpu_process_name(int64_t index, std::string_view device_name);

// The earliest time the trace will hold, the origin of its relative timestamps.
timeline::TimeNs earliest_time(const timeline::Timeline& tl, const samples::Recording* rec,
                               const analyses::StepWindows* steps);

}  // namespace chokepoint::exporters::chrome
