#include "analyses/index.h"

namespace chokepoint::analyses {

using timeline::CpuCategory;
using timeline::GpuOpKind;
using timeline::Timeline;

bool is_dataloader_annotation(std::string_view n) {
  // "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
  // "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
  return n.find("DataLoader") != std::string_view::npos;
}

TimelineIndex build_index(const Timeline& tl) {
  TimelineIndex ix;
  const auto& rc = tl.runtime_calls;
  const auto& cpu = tl.cpu_ranges;
  const auto& g = tl.gpu_ops;

  // API classes, once per distinct name.
  std::unordered_map<timeline::StringId, timeline::ApiClass> api_by_name;
  ix.api.resize(rc.size());
  std::unordered_map<int64_t, int32_t> by_corr;
  by_corr.reserve(rc.size());
  for (size_t i = 0; i < rc.size(); ++i) {
    auto it = api_by_name.find(rc.name[i]);
    if (it == api_by_name.end()) {
      it = api_by_name.emplace(rc.name[i], timeline::classify_api(tl.strings.view(rc.name[i]))).first;
    }
    ix.api[i] = it->second;
    if (rc.correlation[i] >= 0) by_corr.emplace(rc.correlation[i], static_cast<int32_t>(i));
  }

  // ATen ops by External id (the innermost op carries the id its kernels point to).
  std::unordered_map<int64_t, int32_t> op_by_ext;
  op_by_ext.reserve(cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu.category[i] == CpuCategory::kOp && cpu.external_id[i] >= 0) {
      op_by_ext.emplace(cpu.external_id[i], static_cast<int32_t>(i));
    }
  }

  ix.api_op_row.assign(rc.size(), -1);
  for (size_t i = 0; i < rc.size(); ++i) {
    if (rc.external_id[i] < 0) continue;
    auto it = op_by_ext.find(rc.external_id[i]);
    if (it != op_by_ext.end()) ix.api_op_row[i] = it->second;
  }

  // GPU ops: links and classes.
  const size_t n = g.size();
  ix.launch_row.assign(n, -1);
  ix.op_row.assign(n, -1);
  ix.kclass.assign(n, KernelClass::kOther);
  std::unordered_map<timeline::StringId, KernelClass> class_by_name;
  ix.device_ops.resize(tl.devices.size());
  for (size_t i = 0; i < n; ++i) {
    if (g.correlation[i] >= 0) {
      auto it = by_corr.find(g.correlation[i]);
      if (it != by_corr.end()) ix.launch_row[i] = it->second;
    }
    int64_t ext = g.external_id[i];
    if (ext < 0 && ix.launch_row[i] >= 0) ext = rc.external_id[ix.launch_row[i]];
    if (ext >= 0) {
      auto it = op_by_ext.find(ext);
      if (it != op_by_ext.end()) ix.op_row[i] = it->second;
    }
    if (g.kind[i] != GpuOpKind::kKernel) {
      ix.kclass[i] = KernelClass::kCopy;
    } else {
      auto it = class_by_name.find(g.name[i]);
      if (it == class_by_name.end()) {
        it = class_by_name.emplace(g.name[i], classify_kernel_name(tl.strings.view(g.name[i]))).first;
      }
      KernelClass c = it->second;
      if (c == KernelClass::kOther && ix.op_row[i] >= 0) {
        c = classify_op_name(tl.strings.view(cpu.name[ix.op_row[i]]));
      }
      ix.kclass[i] = c;
    }
    const int16_t d = g.device[i];
    if (d >= 0) {
      if (static_cast<size_t>(d) >= ix.device_ops.size()) ix.device_ops.resize(d + 1);
      ix.device_ops[d].push_back(static_cast<uint32_t>(i));  // gpu_ops is sorted by start
    }
  }

  // Per-thread activity.
  for (size_t i = 0; i < cpu.size(); ++i) {
    auto& t = ix.threads[thread_key(cpu.pid[i], cpu.tid[i])];
    if (cpu.category[i] == CpuCategory::kOp) {
      t.op.add(cpu.start[i], cpu.end[i]);
    } else if (cpu.category[i] == CpuCategory::kUserAnnotation &&
               is_dataloader_annotation(tl.strings.view(cpu.name[i]))) {
      t.dataloader.add(cpu.start[i], cpu.end[i]);
    }
  }
  for (size_t i = 0; i < rc.size(); ++i) {
    auto& t = ix.threads[thread_key(rc.pid[i], rc.tid[i])];
    switch (ix.api[i]) {
      case timeline::ApiClass::kSync: t.sync.add(rc.start[i], rc.end[i]); break;
      case timeline::ApiClass::kAlloc:
      case timeline::ApiClass::kFree: t.allocator.add(rc.start[i], rc.end[i]); break;
      default: t.api.add(rc.start[i], rc.end[i]); break;
    }
  }
  const auto& se = tl.sync_events;
  for (size_t i = 0; i < se.size(); ++i) {
    ix.threads[thread_key(se.pid[i], se.tid[i])].sync.add(se.start[i], se.end[i]);
  }
  for (auto& [key, t] : ix.threads) {
    t.dataloader.build();
    t.sync.build();
    t.allocator.build();
    t.api.build();
    t.op.build();
  }
  return ix;
}

}  // namespace chokepoint::analyses
