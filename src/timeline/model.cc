#include "timeline/model.h"

#include <algorithm>
#include <numeric>

namespace chokepoint::timeline {
namespace {

template <typename Table>
void sort_by_time(Table& t) {
  const size_t n = t.size();
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) {
    sorted = t.start[i - 1] < t.start[i] || (t.start[i - 1] == t.start[i] && t.end[i - 1] <= t.end[i]);
  }
  if (sorted) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return t.start[a] < t.start[b] || (t.start[a] == t.start[b] && t.end[a] < t.end[b]);
  });
  t.for_each_column([&](auto& col) {
    using Col = std::decay_t<decltype(col)>;
    Col out;
    out.reserve(col.size());
    for (uint32_t i : order) out.push_back(col[i]);
    col.swap(out);
  });
}

template <typename Table>
size_t table_bytes(Table& t) {
  size_t b = 0;
  t.for_each_column([&](auto& col) { b += col.capacity() * sizeof(col[0]); });
  return b;
}

}  // namespace

void Timeline::finalize() {
  sort_by_time(gpu_ops);
  sort_by_time(cpu_ranges);
  sort_by_time(runtime_calls);
  sort_by_time(sync_events);
  sort_by_time(gpu_annotations);
  sort_by_time(steps);
}

size_t Timeline::event_count() const {
  return gpu_ops.size() + cpu_ranges.size() + runtime_calls.size() + sync_events.size() + gpu_annotations.size();
}

size_t Timeline::memory_bytes() const {
  auto& self = const_cast<Timeline&>(*this);  // for_each_column is non-const; we only read
  size_t b = strings.memory_bytes();
  b += table_bytes(self.gpu_ops) + table_bytes(self.cpu_ranges) + table_bytes(self.runtime_calls) +
       table_bytes(self.sync_events) + table_bytes(self.gpu_annotations) + table_bytes(self.steps);
  b += op_inputs.op_begin.capacity() * 4 + op_inputs.type.capacity() * 4 + op_inputs.dim_begin.capacity() * 4 +
       op_inputs.dims.capacity() * 8;
  return b;
}

int16_t Timeline::device_index(int32_t source_index, int32_t local_id) {
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].source_index == source_index && devices[i].local_id == local_id) {
      return static_cast<int16_t>(i);
    }
  }
  Device d;
  d.source_index = source_index;
  d.local_id = local_id;
  devices.push_back(d);
  return static_cast<int16_t>(devices.size() - 1);
}

const char* copy_kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    case CopyKind::kUnknown: break;
  }
  return "unknown";
}

const char* mem_kind_name(MemKind k) {
  switch (k) {
    case MemKind::kPageable: return "Pageable";
    case MemKind::kPinned: return "Pinned";
    case MemKind::kDevice: return "Device";
    case MemKind::kArray: return "Array";
    case MemKind::kManaged: return "Managed";
    case MemKind::kUnknown: break;
  }
  return "unknown";
}

}  // namespace chokepoint::timeline
