// Maps RawEvents onto the timeline model (docs/FORMATS.md "Kineto trace"): GPU ops, CPU ranges
// with their input shapes, runtime/driver calls, syncs, GPU annotations, ProfilerStep#N
// steps and thread names. Times stay relative to baseTimeNanoseconds until finish(),
// because that member may come after traceEvents in the file.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "importers/kineto/kineto_stats.h"
#include "importers/kineto/raw_event.h"
#include "timeline/model.h"

namespace chokepoint::importers::kineto {

// Top-level members other than traceEvents.
struct TraceMetadata {
  bool has_base_time = false;
  int64_t base_time_ns = 0;
  std::vector<timeline::Device> devices;  // deviceProperties[]; local_id = "id"
  int32_t rank = -1, world_size = -1;
  std::string backend;
};

class EventMapper {
 public:
  EventMapper(timeline::Timeline& tl, int32_t source_index, StatCounter& stats);

  void map(const RawEvent& ev);
  // Number of events mapped into tables (not counting skipped ones).
  int64_t mapped() const { return mapped_; }
  // GPU events (kernels, copies, memsets) seen, and those of them whose duration was
  // negative or missing (given zero length): the share the diagnosis cannot trust.
  int64_t gpu_events() const { return gpu_events_; }
  int64_t gpu_events_without_duration() const { return gpu_events_bad_; }

  // Applies the metadata, shifts every row this mapper added by the base time, links sync
  // records to the thread of their runtime call, and raises the end-of-trace stats.
  void finish(const TraceMetadata& meta);

 private:
  struct Rows {
    size_t gpu_ops, cpu_ranges, runtime_calls, sync_events, gpu_annotations, steps;
  };

  void map_complete(const RawEvent& ev);
  void map_metadata(const RawEvent& ev);
  bool gpu_place(const RawEvent& ev, int16_t* device, int32_t* stream);
  void add_gpu_op(const RawEvent& ev, timeline::GpuOpKind kind, timeline::TimeNs start, timeline::TimeNs end);
  void add_cpu_range(const RawEvent& ev, timeline::CpuCategory cat, timeline::TimeNs start, timeline::TimeNs end);
  uint32_t add_inputs(const RawEvent& ev);
  int64_t global_id(int64_t id);
  int32_t thread_id(int64_t id);
  void shift_times(int64_t base);
  void link_sync_threads();

  timeline::Timeline& tl_;
  int32_t source_;
  StatCounter& stats_;
  Rows begin_;
  int64_t mapped_ = 0;
  int64_t gpu_events_ = 0, gpu_events_bad_ = 0;
  int64_t id_offset_;
  std::unordered_map<int64_t, int16_t> device_index_;  // local device id -> index
  std::unordered_map<int16_t, int64_t> events_on_device_;
  std::unordered_map<uint64_t, size_t> thread_name_row_;  // (pid, tid) -> thread_names row
  std::vector<int64_t> dims_scratch_;
};

}  // namespace chokepoint::importers::kineto
