#include "analyses/whatif/step_graph.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace chokepoint::analyses::whatif {

using timeline::CpuCategory;
using timeline::Timeline;

namespace {

// A GPU op that started this much later than its launch and its stream allowed waited for
// something else (an event recorded on another stream).
constexpr TimeNs kDepToleranceNs = 3'000;
// CUPTI orders GPU and CPU timestamps on one clock; a call that returned within this of a
// GPU op's end is taken to have waited for it.
constexpr TimeNs kEndToleranceNs = 2'000;
// A launch or copy call this long is not just enqueueing work: it may have blocked (a full
// launch queue, a pageable copy) and is checked like a synchronizing call.
constexpr TimeNs kLongCallNs = 20'000;
// The launch latency when no op ran on an idle stream (docs/FORMATS.md "H200 figures": ~5 us for
// the launch call on the H200, the kernel starting right after).
constexpr TimeNs kDefaultLaunchLatencyNs = 5'000;

bool blocks_by_nature(timeline::ApiClass a) {
  return a == timeline::ApiClass::kSync || a == timeline::ApiClass::kFree || a == timeline::ApiClass::kAlloc;
}

bool is_optimizer_annotation(std::string_view n) {
  // "Optimizer.step#AdamW.step", "Optimizer.zero_grad#AdamW.zero_grad" is not a step.
  return n.rfind("Optimizer.step#", 0) == 0;
}

// The process whose steps are replayed: the one with the most windows, ties to the one
// whose windows hold more time.
int32_t replay_pid(const StepWindows& w) {
  std::map<int32_t, std::pair<int64_t, TimeNs>> by_pid;
  for (const auto& s : w.steps) {
    auto& v = by_pid[s.pid];
    ++v.first;
    v.second += s.duration();
  }
  int32_t best = -1;
  std::pair<int64_t, TimeNs> top{-1, -1};
  for (const auto& [pid, v] : by_pid) {
    if (v > top) top = v, best = pid;
  }
  return best;
}

}  // namespace

StepGraph build_step_graph(const Timeline& tl, const TimelineIndex& ix, const StepWindows& w) {
  StepGraph g;
  if (w.steps.empty()) return g;
  g.pid = replay_pid(w);
  std::vector<const StepWindow*> wins;
  for (const auto& s : w.steps) {
    if (s.pid == g.pid) wins.push_back(&s);
  }
  std::sort(wins.begin(), wins.end(), [](const StepWindow* a, const StepWindow* b) { return a->start < b->start; });
  g.source = wins.front()->source;
  // A GPU-bound job's host runs steps ahead of the GPU: the calls of the first window can
  // come before the GPU reaches it (the window starts at the GPU's backlog end).
  g.host_from = wins.front()->cpu_start;
  g.origin = std::min(wins.front()->start, g.host_from);
  g.span_end = wins.back()->end;
  g.steps = static_cast<int64_t>(wins.size());
  for (const auto* s : wins) {
    g.window_start.push_back(s->start);
    g.window_cpu_start.push_back(s->cpu_start);
  }
  const TimeNs host_end = wins.back()->cpu_end;

  // Process-wide host activity: DataLoader waits and the optimizer step, from annotations;
  // ATen ops and Python functions, counted per gap for the recording's cost.
  Intervals loader, optimizer;
  const auto& cpu = tl.cpu_ranges;
  std::vector<uint32_t> op_rows;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu.pid[i] != g.pid || cpu.end[i] <= g.origin || cpu.start[i] >= g.span_end) continue;
    if (cpu.category[i] == CpuCategory::kOp || cpu.category[i] == CpuCategory::kPythonFunction) {
      op_rows.push_back(static_cast<uint32_t>(i));
    } else if (cpu.category[i] == CpuCategory::kUserAnnotation) {
      const auto name = tl.strings.view(cpu.name[i]);
      if (is_dataloader_annotation(name)) loader.add(cpu.start[i], cpu.end[i]);
      if (is_optimizer_annotation(name)) optimizer.add(cpu.start[i], cpu.end[i]);
    }
  }
  loader.build();
  optimizer.build();

  // Host events: the process's API calls that launch, copy, set, synchronize or allocate.
  const auto& rc = tl.runtime_calls;
  std::unordered_map<int32_t, int32_t> event_of_row;
  TimeNs prev_end = g.host_from;
  int32_t prev_tid = -1;
  size_t op_cursor = 0;
  int32_t other_calls = 0;
  for (size_t r = 0; r < rc.size(); ++r) {
    if (rc.pid[r] != g.pid || rc.start[r] < g.host_from || rc.start[r] >= g.span_end) continue;
    const timeline::ApiClass api = ix.api[r];
    if (api == timeline::ApiClass::kOther) {
      ++other_calls;
      continue;
    }
    HostEvent e;
    e.api = api;
    e.rc_row = static_cast<int32_t>(r);
    e.start = std::max(rc.start[r], prev_end);  // a call overlapping another thread's runs after it
    e.end = std::max(rc.end[r], e.start);
    if (rc.start[r] < prev_end && prev_tid >= 0 && prev_tid != rc.tid[r]) g.threads_overlapped = true;
    e.gap = e.start - prev_end;
    e.calls_in_gap = other_calls;
    other_calls = 0;
    e.gap_loader = loader.overlap(prev_end, e.start);
    while (op_cursor < op_rows.size() && cpu.start[op_rows[op_cursor]] < e.start) {
      const uint32_t row = op_rows[op_cursor++];
      if (cpu.category[row] == CpuCategory::kPythonFunction) {
        ++e.py_in_gap;
        continue;
      }
      ++e.ops_in_gap;
      if (cpu.inputs[row] != timeline::CpuRanges::kNoInputs) {
        e.inputs_in_gap += static_cast<int32_t>(tl.op_inputs.num_inputs(cpu.inputs[row]));
      }
    }
    if (optimizer.containing(e.start) != nullptr) e.flags |= kInOptimizer;
    auto win = std::upper_bound(g.window_cpu_start.begin(), g.window_cpu_start.end(), rc.start[r]);
    e.window = static_cast<int32_t>(win - g.window_cpu_start.begin()) - 1;
    event_of_row.emplace(e.rc_row, static_cast<int32_t>(g.host.size()));
    g.host.push_back(e);
    prev_end = e.end;
    prev_tid = rc.tid[r];
  }
  g.tail = std::max<TimeNs>(0, host_end - prev_end);

  // GPU nodes: the ops launched by those calls, and the unlaunched ops of the span.
  const auto& ops = tl.gpu_ops;
  std::map<std::pair<int16_t, int32_t>, int32_t> lane_of;
  for (size_t i = 0; i < ops.size(); ++i) {
    const int16_t d = ops.device[i];
    if (d < 0 || static_cast<size_t>(d) >= tl.devices.size() || tl.devices[d].source_index != g.source) continue;
    int32_t launch = -1;
    if (ix.launch_row[i] >= 0) {
      auto it = event_of_row.find(ix.launch_row[i]);
      if (it != event_of_row.end()) launch = it->second;
    }
    if (launch < 0) {
      // Launched outside the span (or by another process): kept where it ran, if inside.
      const bool other_pid = ix.launch_row[i] >= 0 && rc.pid[ix.launch_row[i]] != g.pid;
      if (other_pid || ops.end[i] <= g.origin || ops.start[i] >= g.span_end) continue;
      if (ix.launch_row[i] >= 0 && rc.start[ix.launch_row[i]] >= g.span_end) continue;
    }
    GpuNode n;
    n.row = static_cast<uint32_t>(i);
    n.launch = launch;
    n.start = ops.start[i];
    n.dur = ops.end[i] - ops.start[i];
    auto [it, fresh] = lane_of.emplace(std::make_pair(d, ops.stream[i]), static_cast<int32_t>(lane_of.size()));
    n.lane = it->second;
    g.gpu.push_back(n);
  }
  std::stable_sort(g.gpu.begin(), g.gpu.end(), [](const GpuNode& a, const GpuNode& b) {
    return a.lane != b.lane ? a.lane < b.lane : a.start < b.start;
  });
  g.lanes.assign(lane_of.size(), {});
  for (size_t k = 0; k < g.gpu.size(); ++k) g.lanes[g.gpu[k].lane].push_back(static_cast<int32_t>(k));
  for (const auto& lane : g.lanes) {
    for (int32_t k : lane) {
      if (g.gpu[k].launch >= 0) break;
      g.gpu[k].backlog = true;
    }
  }

  // Launch latency: call start -> op start for ops whose stream was idle at launch.
  std::vector<TimeNs> lat;
  for (const auto& lane : g.lanes) {
    TimeNs lane_end = std::numeric_limits<TimeNs>::min();
    for (int32_t k : lane) {
      const GpuNode& n = g.gpu[k];
      if (n.launch >= 0 && lane_end < g.host[n.launch].start) lat.push_back(n.start - g.host[n.launch].start);
      lane_end = std::max(lane_end, n.start + n.dur);
    }
  }
  if (!lat.empty()) {
    // The lower quartile: an op that also waited for another stream's event looks like a
    // slow launch here (its dependency is found below, with this latency).
    std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(lat.size() / 4), lat.end());
    g.launch_latency = std::clamp<TimeNs>(lat[lat.size() / 4], 500, 50'000);
  } else {
    g.launch_latency = kDefaultLaunchLatencyNs;
  }

  // Ends of every node, by device, to find what an op or a blocking call waited for.
  std::map<int16_t, std::vector<std::pair<TimeNs, int32_t>>> ends_by_device;
  std::vector<std::pair<TimeNs, int32_t>> all_ends;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const TimeNs e = g.gpu[k].start + g.gpu[k].dur;
    ends_by_device[ops.device[g.gpu[k].row]].emplace_back(e, static_cast<int32_t>(k));
    all_ends.emplace_back(e, static_cast<int32_t>(k));
  }
  for (auto& [d, v] : ends_by_device) std::sort(v.begin(), v.end());
  std::sort(all_ends.begin(), all_ends.end());

  // Cross-stream dependencies.
  for (const auto& lane : g.lanes) {
    TimeNs prev = std::numeric_limits<TimeNs>::min();
    for (int32_t k : lane) {
      GpuNode& n = g.gpu[k];
      const TimeNs ready = n.launch >= 0 ? g.host[n.launch].start + g.launch_latency : n.start;
      const TimeNs allowed = std::max(ready, prev);
      prev = std::max(prev, n.start + n.dur);
      if (n.start <= allowed + kDepToleranceNs) continue;
      const auto& v = ends_by_device[ops.device[n.row]];
      auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(n.start + kEndToleranceNs, INT32_MAX));
      while (it != v.begin()) {
        --it;
        if (it->first < allowed - kDepToleranceNs) break;
        if (g.gpu[it->second].lane != n.lane) {
          n.dep = it->second;
          break;
        }
      }
    }
  }

  // Blocking calls: the GPU op whose end a call waited for. An async copy from or to
  // pageable memory is staged through a driver buffer: the call returns when the copy is
  // (nearly) done, a few us before its record ends. Synchronizing calls (synchronize,
  // synchronous copies, cudaFree, cudaMalloc) wait for the last op that ended while they
  // ran; any other call that long waited when most of it was waiting (a full launch queue).
  std::vector<int32_t> own_copy(g.host.size(), -1);
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const GpuNode& n = g.gpu[k];
    if (n.launch < 0 || ops.kind[n.row] != timeline::GpuOpKind::kMemcpy) continue;
    const bool pageable = ops.src_kind[n.row] == timeline::MemKind::kPageable ||
                          ops.dst_kind[n.row] == timeline::MemKind::kPageable;
    if (pageable) own_copy[n.launch] = static_cast<int32_t>(k);
  }
  for (size_t i = 0; i < g.host.size(); ++i) {
    HostEvent& e = g.host[i];
    const TimeNs dur = e.end - e.start;
    if (own_copy[i] >= 0) {
      const GpuNode& n = g.gpu[own_copy[i]];
      if (e.end >= n.start + n.dur / 2) {
        e.waits_for = own_copy[i];
        e.after_wait = std::max<TimeNs>(0, e.end - (n.start + n.dur));
        if (e.api == timeline::ApiClass::kMemcpyAsync) e.flags |= kBlockingCopy;
        continue;
      }
    }
    const bool syncing = blocks_by_nature(e.api);
    if (!syncing && dur < kLongCallNs) continue;
    auto it = std::upper_bound(all_ends.begin(), all_ends.end(), std::make_pair(e.end + kEndToleranceNs, INT32_MAX));
    while (it != all_ends.begin()) {
      --it;
      if (it->first <= e.start) break;  // ended before the call: it did not wait for it
      const GpuNode& n = g.gpu[it->second];
      // Work enqueued later cannot hold a call; a launch or async copy does not wait for
      // its own op (a synchronous copy does).
      if (n.launch > static_cast<int32_t>(i) || (!syncing && n.launch == static_cast<int32_t>(i))) continue;
      const TimeNs waited = it->first - e.start;
      if (!syncing && waited * 2 < dur) break;  // a long call that mostly did its own work
      e.waits_for = it->second;
      e.after_wait = std::max<TimeNs>(0, e.end - it->first);
      break;
    }
  }
  return g;
}

}  // namespace chokepoint::analyses::whatif
