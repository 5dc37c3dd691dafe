#include "importers/kineto/event_mapper.h"

#include <algorithm>
#include <limits>

#include "importers/kineto/event_names.h"

namespace chokepoint::importers::kineto {
namespace {

// Bytes per element of a c10 ScalarType name as Kineto writes NCCL kernels' "dtype"; 0 unknown.
int64_t dtype_bytes(std::string_view t) {
  if (t == "Double" || t == "Long" || t == "ComplexFloat") return 8;
  if (t == "Float" || t == "Int") return 4;
  if (t == "BFloat16" || t == "Half" || t == "Short") return 2;
  if (t == "Byte" || t == "Char" || t == "Bool" || t.starts_with("Float8")) return 1;
  return 0;
}

using namespace timeline;

template <typename T>
T clamp_to(int64_t v, T unknown) {
  return (v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max()) ? static_cast<T>(v) : unknown;
}

TimeNs add_saturating(TimeNs a, TimeNs b) {
  TimeNs r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<TimeNs>::max() : std::numeric_limits<TimeNs>::min();
}

// Kineto puts GPU events on pid = device; real devices number at most a few dozen per
// host, so anything beyond this is corrupt input rather than a device.
constexpr int64_t kMaxDeviceId = 1 << 16;
constexpr size_t kMaxDevices = 30000;  // Timeline device indices are int16

}  // namespace

EventMapper::EventMapper(Timeline& tl, int32_t source_index, StatCounter& stats)
    : tl_(tl),
      source_(source_index),
      stats_(stats),
      begin_{tl.gpu_ops.size(),     tl.cpu_ranges.size(),      tl.runtime_calls.size(),
             tl.sync_events.size(), tl.gpu_annotations.size(), tl.steps.size()},
      id_offset_(int64_t{source_index} << 48) {}

int64_t EventMapper::global_id(int64_t id) {
  if (id < 0) return -1;
  int64_t r;
  if (__builtin_add_overflow(id, id_offset_, &r)) {
    stats_.add(Stat::kIdOutOfRange);
    return -1;
  }
  return r;
}

// Old Kineto versions wrote pthread ids (64-bit) as tids: fold them into 32 bits, which
// keeps distinct threads distinct in practice.
int32_t EventMapper::thread_id(int64_t id) {
  if (id >= std::numeric_limits<int32_t>::min() && id <= std::numeric_limits<int32_t>::max()) {
    return static_cast<int32_t>(id);
  }
  stats_.add(Stat::kIdOutOfRange);
  return static_cast<int32_t>(static_cast<uint64_t>(id) ^ (static_cast<uint64_t>(id) >> 32));
}

void EventMapper::map(const RawEvent& ev) {
  if (ev.bad_numbers) stats_.add(Stat::kBadNumber, ev.bad_numbers);
  if (ev.int_overflows) stats_.add(Stat::kIntOverflow, ev.int_overflows);
  if (ev.duplicate_keys) stats_.add(Stat::kDuplicateKey, ev.duplicate_keys);
  switch (ev.ph) {
    case 'X': map_complete(ev); break;
    case 'M': map_metadata(ev); break;
    default: stats_.add(Stat::kEventsIgnored); break;
  }
}

void EventMapper::map_metadata(const RawEvent& ev) {
  const bool process = ev.name == "process_name";
  if (!process && ev.name != "thread_name") {
    stats_.add(Stat::kEventsIgnored);  // sort indices, labels
    return;
  }
  if (ev.pid.kind != RawId::kNumber || (!process && ev.tid.kind != RawId::kNumber)) {
    stats_.add(Stat::kNonNumericPid);
    return;
  }
  const int32_t pid = thread_id(ev.pid.value);
  const int32_t tid = process ? -1 : thread_id(ev.tid.value);
  const uint64_t key = (uint64_t{static_cast<uint32_t>(pid)} << 32) | static_cast<uint32_t>(tid);
  auto [it, added] = thread_name_row_.emplace(key, tl_.thread_names.size());
  if (added) {
    tl_.thread_names.push_back(ThreadName{pid, tid, std::string(ev.arg_name)});
  } else {
    tl_.thread_names[it->second].name = std::string(ev.arg_name);  // repeated: last wins
  }
  ++mapped_;
}

bool EventMapper::gpu_place(const RawEvent& ev, int16_t* device, int32_t* stream) {
  const int64_t local = ev.device >= 0 ? ev.device : ev.pid.value;
  const int64_t s = ev.stream != -1 ? ev.stream : ev.tid.value;
  if (local < 0 || local >= kMaxDeviceId || s < std::numeric_limits<int32_t>::min() ||
      s > std::numeric_limits<int32_t>::max()) {
    stats_.add(Stat::kIdOutOfRange);
    return false;
  }
  auto it = device_index_.find(local);
  if (it == device_index_.end()) {
    if (tl_.devices.size() >= kMaxDevices) {
      stats_.add(Stat::kIdOutOfRange);
      return false;
    }
    it = device_index_.emplace(local, tl_.device_index(source_, static_cast<int32_t>(local))).first;
  }
  *device = it->second;
  *stream = static_cast<int32_t>(s);
  return true;
}

void EventMapper::map_complete(const RawEvent& ev) {
  const Cat cat = classify_cat(ev.cat);
  if (cat == Cat::kTrace) {
    stats_.add(Stat::kEventsIgnored);  // the profiler's own span, not workload
    return;
  }
  if (ev.pid.kind != RawId::kNumber || ev.tid.kind != RawId::kNumber) {
    stats_.add(Stat::kNonNumericPid);
    return;
  }
  if (!ev.has_ts) {
    stats_.add(Stat::kMissingTimestamp);
    return;
  }
  int64_t dur = ev.dur_ns;
  const bool gpu = cat == Cat::kKernel || cat == Cat::kMemcpy || cat == Cat::kMemset;
  gpu_events_ += gpu;
  if (!ev.has_dur) {
    stats_.add(Stat::kMissingDuration);
    dur = 0;
    gpu_events_bad_ += gpu;
  } else if (dur < 0) {
    stats_.add(Stat::kNegativeDuration);
    dur = 0;
    gpu_events_bad_ += gpu;
  }
  const TimeNs start = ev.ts_ns;
  const TimeNs end = add_saturating(start, dur);

  switch (cat) {
    case Cat::kKernel: add_gpu_op(ev, GpuOpKind::kKernel, start, end); return;
    case Cat::kMemcpy: add_gpu_op(ev, GpuOpKind::kMemcpy, start, end); return;
    case Cat::kMemset: add_gpu_op(ev, GpuOpKind::kMemset, start, end); return;
    case Cat::kCpuOp: add_cpu_range(ev, CpuCategory::kOp, start, end); return;
    case Cat::kPythonFunction: add_cpu_range(ev, CpuCategory::kPythonFunction, start, end); return;
    case Cat::kOther: add_cpu_range(ev, CpuCategory::kOther, start, end); return;
    case Cat::kUserAnnotation: {
      add_cpu_range(ev, CpuCategory::kUserAnnotation, start, end);
      int64_t n;
      if (profiler_step_number(ev.name, &n)) {
        Steps& s = tl_.steps;
        s.number.push_back(n);
        s.source_index.push_back(source_);
        s.pid.push_back(tl_.cpu_ranges.pid.back());
        s.tid.push_back(tl_.cpu_ranges.tid.back());
        s.start.push_back(start);
        s.end.push_back(end);
        s.how.push_back(StepSource::kProfilerStep);
      }
      return;
    }
    case Cat::kRuntime:
    case Cat::kDriver: {
      RuntimeCalls& r = tl_.runtime_calls;
      r.pid.push_back(thread_id(ev.pid.value));
      r.tid.push_back(thread_id(ev.tid.value));
      r.api.push_back(cat == Cat::kRuntime ? ApiKind::kRuntime : ApiKind::kDriver);
      r.name.push_back(tl_.strings.intern(ev.name));
      r.start.push_back(start);
      r.end.push_back(end);
      r.correlation.push_back(global_id(ev.correlation));
      r.external_id.push_back(global_id(ev.external_id));
      r.cbid.push_back(clamp_to<int32_t>(ev.cbid, -1));
      ++mapped_;
      return;
    }
    case Cat::kSync: {
      // Kineto writes sync records on the GPU rows (pid = device, tid = stream); the
      // blocked CPU thread is the one of the runtime call with the same correlation,
      // filled in by finish().
      int16_t device = -1;
      int32_t stream = -1;
      if (!gpu_place(ev, &device, &stream)) return;
      SyncEvents& s = tl_.sync_events;
      s.pid.push_back(-1);
      s.tid.push_back(-1);
      s.device.push_back(device);
      s.stream.push_back(stream);
      s.kind.push_back(sync_kind(ev.sync_kind.empty() ? ev.name : ev.sync_kind));
      s.start.push_back(start);
      s.end.push_back(end);
      s.correlation.push_back(global_id(ev.correlation));
      s.event_stream.push_back(-1);
      s.event_correlation.push_back(-1);
      ++mapped_;
      return;
    }
    case Cat::kGpuUserAnnotation: {
      int16_t device;
      int32_t stream;
      if (!gpu_place(ev, &device, &stream)) return;
      GpuAnnotations& a = tl_.gpu_annotations;
      a.device.push_back(device);
      a.stream.push_back(stream);
      a.name.push_back(tl_.strings.intern(ev.name));
      a.start.push_back(start);
      a.end.push_back(end);
      ++mapped_;
      return;
    }
    case Cat::kTrace: return;
  }
}

void EventMapper::add_gpu_op(const RawEvent& ev, GpuOpKind kind, TimeNs start, TimeNs end) {
  int16_t device;
  int32_t stream;
  if (!gpu_place(ev, &device, &stream)) return;
  ++events_on_device_[device];
  CopyKind copy = CopyKind::kUnknown;
  MemKind src = MemKind::kUnknown, dst = MemKind::kUnknown;
  if (kind == GpuOpKind::kMemcpy) parse_memcpy_name(ev.name, &copy, &src, &dst);
  if (kind == GpuOpKind::kMemset) dst = mem_kind(in_parens(ev.name));
  const bool kernel = kind == GpuOpKind::kKernel;
  GpuOps& g = tl_.gpu_ops;
  g.kind.push_back(kind);
  g.device.push_back(device);
  g.stream.push_back(stream);
  g.start.push_back(start);
  g.end.push_back(end);
  g.name.push_back(tl_.strings.intern(ev.name));
  g.correlation.push_back(global_id(ev.correlation));
  g.external_id.push_back(global_id(ev.external_id));
  g.grid.push_back(kernel ? ev.grid : std::array<int32_t, 3>{});
  g.block.push_back(kernel ? ev.block : std::array<int32_t, 3>{});
  g.registers.push_back(clamp_to<int16_t>(ev.registers, -1));
  g.shared_mem.push_back(clamp_to<int32_t>(ev.shared_mem, -1));
  g.occupancy_pct.push_back(ev.occupancy_pct);
  // Collective kernels (NCCL): the message size, from its element count and type.
  g.bytes.push_back(kernel ? (ev.msg_nelems > 0 ? ev.msg_nelems * dtype_bytes(ev.dtype) : 0) : ev.bytes);
  g.copy_kind.push_back(copy);
  g.src_kind.push_back(src);
  g.dst_kind.push_back(dst);
  ++mapped_;
}

void EventMapper::add_cpu_range(const RawEvent& ev, CpuCategory cat, TimeNs start, TimeNs end) {
  CpuRanges& c = tl_.cpu_ranges;
  c.pid.push_back(thread_id(ev.pid.value));
  c.tid.push_back(thread_id(ev.tid.value));
  c.category.push_back(cat);
  c.name.push_back(tl_.strings.intern(ev.name));
  c.start.push_back(start);
  c.end.push_back(end);
  c.external_id.push_back(global_id(ev.external_id));
  c.sequence.push_back(ev.sequence);
  c.inputs.push_back(add_inputs(ev));
  ++mapped_;
}

uint32_t EventMapper::add_inputs(const RawEvent& ev) {
  if (!ev.has_input_types && !ev.has_input_dims) return CpuRanges::kNoInputs;
  const size_t with_dims = ev.dim_begin.empty() ? 0 : ev.dim_begin.size() - 1;
  const size_t n = std::max(ev.input_types.size(), with_dims);
  OpInputs& oi = tl_.op_inputs;
  const uint32_t op = oi.begin_op();
  for (size_t j = 0; j < n; ++j) {
    const StringId type = j < ev.input_types.size() ? tl_.strings.intern(ev.input_types[j]) : kEmptyString;
    if (j < with_dims) {
      oi.add_input(type, ev.dims.data() + ev.dim_begin[j], ev.dim_begin[j + 1] - ev.dim_begin[j]);
    } else {
      oi.add_input(type, nullptr, 0);
    }
  }
  oi.end_op();
  return op;
}

void EventMapper::finish(const TraceMetadata& meta) {
  Source& src = tl_.sources[source_];
  src.base_time_ns = meta.base_time_ns;
  src.rank = meta.rank;
  src.world_size = meta.world_size;
  src.backend = meta.backend;

  for (const Device& d : meta.devices) {
    Device& out = tl_.devices[tl_.device_index(source_, d.local_id)];
    const int32_t s = out.source_index, id = out.local_id;
    out = d;
    out.source_index = s;
    out.local_id = id;
  }
  for (const auto& [device, events] : events_on_device_) {
    bool described = false;
    for (const Device& d : meta.devices) described |= d.local_id == tl_.devices[device].local_id;
    if (!described) stats_.add(Stat::kUnknownDevice, events);
  }

  if (!meta.has_base_time) stats_.add(Stat::kNoBaseTime);
  shift_times(meta.base_time_ns);
  link_sync_threads();
  if (tl_.steps.size() == begin_.steps) stats_.add(Stat::kNoSteps);
}

void EventMapper::shift_times(int64_t base) {
  auto shift = [base](auto& table, size_t begin) {
    for (size_t i = begin; i < table.size(); ++i) {
      table.start[i] = add_saturating(table.start[i], base);
      table.end[i] = add_saturating(table.end[i], base);
    }
  };
  if (base == 0) return;
  shift(tl_.gpu_ops, begin_.gpu_ops);
  shift(tl_.cpu_ranges, begin_.cpu_ranges);
  shift(tl_.runtime_calls, begin_.runtime_calls);
  shift(tl_.sync_events, begin_.sync_events);
  shift(tl_.gpu_annotations, begin_.gpu_annotations);
  shift(tl_.steps, begin_.steps);
}

void EventMapper::link_sync_threads() {
  SyncEvents& s = tl_.sync_events;
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> thread_of;  // correlation -> thread
  for (size_t i = begin_.sync_events; i < s.size(); ++i) {
    if (s.correlation[i] >= 0) thread_of.emplace(s.correlation[i], std::pair(-1, -1));
  }
  if (thread_of.empty()) return;
  const RuntimeCalls& r = tl_.runtime_calls;
  for (size_t i = begin_.runtime_calls; i < r.size(); ++i) {
    auto it = thread_of.find(r.correlation[i]);
    if (it != thread_of.end()) it->second = {r.pid[i], r.tid[i]};
  }
  for (size_t i = begin_.sync_events; i < s.size(); ++i) {
    auto it = thread_of.find(s.correlation[i]);
    if (it == thread_of.end()) continue;
    s.pid[i] = it->second.first;
    s.tid[i] = it->second.second;
  }
}

}  // namespace chokepoint::importers::kineto
