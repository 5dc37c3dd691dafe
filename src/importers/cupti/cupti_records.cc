#include "importers/cupti/cupti_records.h"

#include <string>
#include <unordered_map>

namespace chokepoint::importers {

std::string copy_name(timeline::CopyKind k, timeline::MemKind src, timeline::MemKind dst) {
  return std::string("Memcpy ") + timeline::copy_kind_name(k) + " (" + timeline::mem_kind_name(src) + " -> " +
         timeline::mem_kind_name(dst) + ")";
}

std::string set_name(timeline::MemKind dst) { return std::string("Memset (") + timeline::mem_kind_name(dst) + ")"; }

void append_gpu_op(timeline::GpuOps& g, const GpuOpRecord& r) {
  const bool kernel = r.kind == timeline::GpuOpKind::kKernel;
  g.kind.push_back(r.kind);
  g.device.push_back(r.device);
  g.stream.push_back(r.stream);
  g.start.push_back(r.start);
  g.end.push_back(r.end);
  g.name.push_back(r.name);
  g.correlation.push_back(r.correlation);
  g.external_id.push_back(-1);
  g.grid.push_back(kernel ? r.grid : std::array<int32_t, 3>{});
  g.block.push_back(kernel ? r.block : std::array<int32_t, 3>{});
  g.registers.push_back(kernel ? r.registers : int16_t{-1});
  g.shared_mem.push_back(kernel ? r.shared_mem : -1);
  g.occupancy_pct.push_back(timeline::kUnknownF);
  g.bytes.push_back(kernel ? 0 : r.bytes);
  g.copy_kind.push_back(r.copy_kind);
  g.src_kind.push_back(r.src);
  g.dst_kind.push_back(r.dst);
}

void append_annotation(timeline::CpuRanges& c, int32_t pid, int32_t tid, timeline::StringId name,
                       timeline::TimeNs start, timeline::TimeNs end) {
  c.pid.push_back(pid);
  c.tid.push_back(tid);
  c.category.push_back(timeline::CpuCategory::kUserAnnotation);
  c.name.push_back(name);
  c.start.push_back(start);
  c.end.push_back(end);
  c.external_id.push_back(-1);
  c.sequence.push_back(-1);
  c.inputs.push_back(timeline::CpuRanges::kNoInputs);
}

void link_sync_threads(timeline::Timeline& tl, size_t first_call, size_t first_sync) {
  std::unordered_map<int64_t, size_t> call_of;
  const auto& c = tl.runtime_calls;
  for (size_t i = first_call; i < c.size(); ++i) {
    if (c.correlation[i] >= 0) call_of[c.correlation[i]] = i;
  }
  auto& s = tl.sync_events;
  for (size_t i = first_sync; i < s.size(); ++i) {
    const auto it = call_of.find(s.correlation[i]);
    if (it != call_of.end()) {
      s.tid[i] = c.tid[it->second];
      s.pid[i] = c.pid[it->second];
    }
  }
}

}  // namespace chokepoint::importers
