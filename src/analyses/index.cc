#include "analyses/index.h"

#include "analyses/op_shapes.h"

namespace chokepoint::analyses {

using timeline::CpuCategory;
using timeline::GpuOpKind;
using timeline::Timeline;
using timeline::TimeNs;

bool is_dataloader_annotation(std::string_view n) {
  // "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
  // "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
  return n.find("DataLoader") != std::string_view::npos;
}

namespace {

using RowOf = std::unordered_map<int64_t, int32_t>;

// API classes, once per distinct name; returns the RuntimeCalls row of each correlation id.
RowOf classify_api_calls(const Timeline& tl, TimelineIndex& ix) {
  const auto& rc = tl.runtime_calls;
  std::unordered_map<timeline::StringId, timeline::ApiClass> api_by_name;
  ix.api.resize(rc.size());
  RowOf by_corr;
  by_corr.reserve(rc.size());
  for (size_t i = 0; i < rc.size(); ++i) {
    auto it = api_by_name.find(rc.name[i]);
    if (it == api_by_name.end()) {
      it = api_by_name.emplace(rc.name[i], timeline::classify_api(tl.strings.view(rc.name[i]))).first;
    }
    ix.api[i] = it->second;
    if (rc.correlation[i] >= 0) by_corr.emplace(rc.correlation[i], static_cast<int32_t>(i));
  }
  return by_corr;
}

// ATen ops by External id (the innermost op carries the id its kernels point to).
RowOf ops_by_external_id(const timeline::CpuRanges& cpu) {
  RowOf op_by_ext;
  op_by_ext.reserve(cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu.category[i] == CpuCategory::kOp && cpu.external_id[i] >= 0) {
      op_by_ext.emplace(cpu.external_id[i], static_cast<int32_t>(i));
    }
  }
  return op_by_ext;
}

// The row `key` maps to, -1 when it is negative or not there.
int32_t row_of(const RowOf& rows, int64_t key) {
  if (key < 0) return -1;
  auto it = rows.find(key);
  return it != rows.end() ? it->second : -1;
}

// A kernel's class, by its name (once per distinct name) or else by its ATen op's.
class KernelClassifier {
 public:
  explicit KernelClassifier(const Timeline& tl) : tl_(tl) {}

  KernelClass of(timeline::StringId name, int32_t op_row) {
    auto it = class_by_name_.find(name);
    if (it == class_by_name_.end()) {
      it = class_by_name_.emplace(name, classify_kernel_name(tl_.strings.view(name))).first;
    }
    KernelClass c = it->second;
    if (c == KernelClass::kOther && op_row >= 0) c = classify_op_name(tl_.strings.view(tl_.cpu_ranges.name[op_row]));
    return c;
  }

 private:
  const Timeline& tl_;
  std::unordered_map<timeline::StringId, KernelClass> class_by_name_;
};

// GPU ops: links to their launch call and ATen op, classes, and each device's ops.
void index_gpu_ops(const Timeline& tl, const RowOf& by_corr, const RowOf& op_by_ext, TimelineIndex& ix) {
  const auto& rc = tl.runtime_calls;
  const auto& g = tl.gpu_ops;
  const size_t n = g.size();
  ix.launch_row.assign(n, -1);
  ix.op_row.assign(n, -1);
  ix.kclass.assign(n, KernelClass::kOther);
  KernelClassifier classes(tl);
  ix.device_ops.resize(tl.devices.size());
  for (size_t i = 0; i < n; ++i) {
    ix.launch_row[i] = row_of(by_corr, g.correlation[i]);
    int64_t ext = g.external_id[i];
    if (ext < 0 && ix.launch_row[i] >= 0) ext = rc.external_id[ix.launch_row[i]];
    ix.op_row[i] = row_of(op_by_ext, ext);
    ix.kclass[i] = g.kind[i] != GpuOpKind::kKernel ? KernelClass::kCopy : classes.of(g.name[i], ix.op_row[i]);
    const int16_t d = g.device[i];
    if (d >= 0) {
      if (static_cast<size_t>(d) >= ix.device_ops.size()) ix.device_ops.resize(d + 1);
      ix.device_ops[d].push_back(static_cast<uint32_t>(i));  // gpu_ops is sorted by start
    }
  }
}

// Each kernel's share of its op's bytes (TimelineIndex::op_bytes). Counted whole for each
// kernel, cuDNN's LSTM elementwise kernels read 284% of the H200's HBM rate, and gemv_batch's
// split-K reductions 3,269% (the GEMV's weights, again).
void share_op_bytes(const Timeline& tl, TimelineIndex& ix) {
  const auto& g = tl.gpu_ops;
  ix.op_bytes.assign(g.size(), 0);
  std::unordered_map<int32_t, TimeNs> kernel_ns;  // per op row: its kernels' time
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] == GpuOpKind::kKernel && ix.op_row[i] >= 0) kernel_ns[ix.op_row[i]] += g.end[i] - g.start[i];
  }
  struct OpBytes {
    double bytes = 0;
    bool gemm = false;
  };
  std::unordered_map<int32_t, OpBytes> of_op;  // per op row, computed once
  for (size_t i = 0; i < g.size(); ++i) {
    const int32_t op = ix.op_row[i];
    if (g.kind[i] != GpuOpKind::kKernel || op < 0) continue;
    auto [it, fresh] = of_op.emplace(op, OpBytes{});
    if (fresh) it->second = {op_io_bytes(tl, op), gemm_shape(tl, op).has_value()};
    const TimeNs total = kernel_ns[op];
    if (it->second.bytes <= 0 || total <= 0 || (it->second.gemm && ix.kclass[i] != KernelClass::kGemm)) continue;
    ix.op_bytes[i] = it->second.bytes * static_cast<double>(g.end[i] - g.start[i]) / static_cast<double>(total);
  }
}

// Per-thread activity.
void index_threads(const Timeline& tl, TimelineIndex& ix) {
  const auto& rc = tl.runtime_calls;
  const auto& cpu = tl.cpu_ranges;
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
}

}  // namespace

TimelineIndex build_index(const Timeline& tl) {
  TimelineIndex ix;
  const auto& rc = tl.runtime_calls;
  const RowOf by_corr = classify_api_calls(tl, ix);
  const RowOf op_by_ext = ops_by_external_id(tl.cpu_ranges);
  ix.api_op_row.assign(rc.size(), -1);
  for (size_t i = 0; i < rc.size(); ++i) ix.api_op_row[i] = row_of(op_by_ext, rc.external_id[i]);
  index_gpu_ops(tl, by_corr, op_by_ext, ix);
  share_op_bytes(tl, ix);
  index_threads(tl, ix);
  return ix;
}

}  // namespace chokepoint::analyses
