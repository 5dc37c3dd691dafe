// The pieces of chrome_trace.cc decided before any event is written (chrome_trace_tracks.h).
#include "exporters/chrome_trace_tracks.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exporters/chrome_trace.h"
#include "samples/metric.h"

namespace chokepoint::exporters::chrome {

using timeline::CpuCategory;
using timeline::GpuOpKind;
using timeline::SyncKind;
using timeline::Timeline;
using timeline::TimeNs;

std::string_view gpu_op_category(GpuOpKind k) {
  switch (k) {
    case GpuOpKind::kKernel: return "kernel";
    case GpuOpKind::kMemcpy: return "gpu_memcpy";
    case GpuOpKind::kMemset: return "gpu_memset";
  }
  return "gpu_op";
}

std::string_view cpu_category(CpuCategory c) {
  switch (c) {
    case CpuCategory::kOp: return "cpu_op";
    case CpuCategory::kUserAnnotation: return "user_annotation";
    case CpuCategory::kPythonFunction: return "python_function";
    case CpuCategory::kOther: return "cpu_other";
  }
  return "cpu_other";
}

std::string_view sync_name(SyncKind k) {
  switch (k) {
    case SyncKind::kEventSync: return "Event Sync";
    case SyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case SyncKind::kStreamSync: return "Stream Sync";
    case SyncKind::kContextSync: return "Context Sync";
    case SyncKind::kUnknown: break;
  }
  return "Sync";
}

bool exported(const samples::Series& s) {
  return s.entity.kind != samples::EntityKind::kThread || s.metric == samples::MetricId::kThreadCpuPct;
}

std::string_view short_metric_name(std::string_view name) {
  const size_t dot = name.find('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

LaunchLinks LaunchLinks::build(const Timeline& tl) {
  const auto& rc = tl.runtime_calls;
  const auto& g = tl.gpu_ops;
  LaunchLinks l;
  l.begin.assign(rc.size() + 1, 0);
  l.launched.assign(g.size(), 0);
  std::unordered_map<int64_t, uint32_t> by_corr;
  by_corr.reserve(rc.size());
  for (size_t i = 0; i < rc.size(); ++i) {
    if (rc.correlation[i] >= 0) by_corr.emplace(rc.correlation[i], static_cast<uint32_t>(i));
  }
  std::vector<int64_t> call(g.size(), -1);
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.correlation[i] < 0) continue;
    const auto it = by_corr.find(g.correlation[i]);
    if (it == by_corr.end()) continue;
    call[i] = it->second;
    l.launched[i] = 1;
    ++l.begin[it->second + 1];
  }
  for (size_t i = 0; i < rc.size(); ++i) l.begin[i + 1] += l.begin[i];
  l.ops.resize(l.begin.back());
  std::vector<uint32_t> fill(l.begin.begin(), l.begin.end() - 1);
  for (size_t i = 0; i < g.size(); ++i) {
    if (call[i] >= 0) l.ops[fill[call[i]]++] = static_cast<uint32_t>(i);
  }
  return l;
}

// Where a sampled GPU's counters go. The trace's device ids are CUDA ordinals, NVML's are
// physical indices; they agree only when the workload saw every GPU in NVML's order, so a
// sampled GPU joins a traced device only when the sampled GPUs and the traced device ids
// are the same set with the same names. Otherwise (a CUDA_VISIBLE_DEVICES subset) the
// counters get a GPU process of their own rather than risk landing on the wrong GPU.
std::map<int64_t, int64_t> sampled_gpu_pids(const Timeline& tl, const samples::Recording& rec) {
  std::map<int64_t, int64_t> pid;  // NVML index -> trace pid
  std::map<int64_t, const samples::GpuMeta*> meta;
  for (const auto& g : rec.meta.gpus) meta[g.index] = &g;
  for (const auto& s : rec.samples.series()) {
    if (s.entity.kind == samples::EntityKind::kGpu) pid[s.entity.id] = kChromeSampledGpuPidBase + s.entity.id;
  }
  // Local id -> the device with that id that ran the most GPU ops: with one trace per
  // process, a process that only queried the GPUs (torchrun's parent) has them too.
  std::vector<size_t> ops(tl.devices.size(), 0);
  for (int16_t d : tl.gpu_ops.device) {
    if (d >= 0 && static_cast<size_t>(d) < ops.size()) ++ops[static_cast<size_t>(d)];
  }
  std::map<int64_t, size_t> traced;
  for (size_t d = 0; d < tl.devices.size(); ++d) {
    auto [it, fresh] = traced.emplace(tl.devices[d].local_id, d);
    if (!fresh && ops[d] > ops[it->second]) it->second = d;
  }
  if (traced.empty() || traced.size() != pid.size()) return pid;
  for (const auto& [index, p] : pid) {
    const auto t = traced.find(index);
    if (t == traced.end()) return pid;
    const auto m = meta.find(index);
    const std::string& traced_name = tl.devices[t->second].name;
    if (m != meta.end() && !traced_name.empty() && !m->second->name.empty() && m->second->name != traced_name) {
      return pid;
    }
  }
  for (auto& [index, p] : pid) p = kChromeGpuPidBase + static_cast<int64_t>(traced[index]);
  return pid;
}

std::string gpu_process_name(int64_t index, std::string_view device_name) {
  std::string name = "GPU " + std::to_string(index);
  if (!device_name.empty()) name += " (" + std::string(device_name) + ")";
  return name;
}

TimeNs earliest_time(const Timeline& tl, const samples::Recording* rec, const analyses::StepWindows* steps) {
  TimeNs t = std::numeric_limits<TimeNs>::max();
  const auto scan = [&](const std::vector<TimeNs>& starts) {
    for (TimeNs s : starts) t = std::min(t, s);
  };
  scan(tl.gpu_ops.start);
  scan(tl.cpu_ranges.start);
  scan(tl.runtime_calls.start);
  scan(tl.sync_events.start);
  scan(tl.gpu_annotations.start);
  if (steps != nullptr && !steps->whole_trace) {
    for (const auto& w : steps->steps) t = std::min(t, w.start);
  }
  if (rec != nullptr) {
    for (const auto& s : rec->samples.series()) {
      if (!exported(s)) continue;
      for (size_t i = 0; i < s.size(); ++i) {
        if (has_value(s, i)) t = std::min(t, s.time_ns[i]);
      }
    }
  }
  return t == std::numeric_limits<TimeNs>::max() ? 0 : t;
}

}  // namespace chokepoint::exporters::chrome
