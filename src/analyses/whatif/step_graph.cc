#include "analyses/whatif/step_graph.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
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
// whose windows hold more time; of one trace file (source): two files of one process are
// two profiler windows minutes apart (a schedule with repeat, issue 44), and one replay
// across both read "50,009 ms per step recorded". The windows of the other files are
// analyzed all the same; the what-ifs replay the steps of one.
std::pair<int32_t, int32_t> replay_source_pid(const StepWindows& w) {
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, TimeNs>> by_key;
  for (const auto& s : w.steps) {
    auto& v = by_key[{s.source, s.pid}];
    ++v.first;
    v.second += s.duration();
  }
  std::pair<int32_t, int32_t> best{0, -1};
  std::pair<int64_t, TimeNs> top{-1, -1};
  for (const auto& [key, v] : by_key) {
    if (v > top) top = v, best = key;
  }
  return best;
}

// Sets the replayed process, its windows and the span they cover; returns the end of the
// host's last step.
TimeNs set_windows(const StepWindows& w, StepGraph& g) {
  const auto [source, pid] = replay_source_pid(w);
  g.pid = pid;
  std::vector<const StepWindow*> wins;
  for (const auto& s : w.steps) {
    if (s.pid == g.pid && s.source == source) wins.push_back(&s);
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
  return wins.back()->cpu_end;
}

// Process-wide host activity: DataLoader waits and the optimizer step, from annotations;
// ATen ops and Python functions, counted per gap for the recording's cost.
struct HostActivity {
  Intervals loader, optimizer;
  std::vector<uint32_t> op_rows;  // CpuRanges rows of ATen ops and Python functions, in start order
};

HostActivity host_activity(const Timeline& tl, const StepGraph& g) {
  HostActivity act;
  const auto& cpu = tl.cpu_ranges;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu.pid[i] != g.pid || cpu.end[i] <= g.origin || cpu.start[i] >= g.span_end) continue;
    if (cpu.category[i] == CpuCategory::kOp || cpu.category[i] == CpuCategory::kPythonFunction) {
      act.op_rows.push_back(static_cast<uint32_t>(i));
    } else if (cpu.category[i] == CpuCategory::kUserAnnotation) {
      const auto name = tl.strings.view(cpu.name[i]);
      if (is_dataloader_annotation(name)) act.loader.add(cpu.start[i], cpu.end[i]);
      if (is_optimizer_annotation(name)) act.optimizer.add(cpu.start[i], cpu.end[i]);
    }
  }
  act.loader.build();
  act.optimizer.build();
  return act;
}

// Counts the ATen ops (and their inputs) and Python functions that began before `e.start`
// from `cursor` on into `e`, advancing `cursor`.
void count_gap_ops(const Timeline& tl, const std::vector<uint32_t>& op_rows, size_t& cursor, HostEvent& e) {
  const auto& cpu = tl.cpu_ranges;
  while (cursor < op_rows.size() && cpu.start[op_rows[cursor]] < e.start) {
    const uint32_t row = op_rows[cursor++];
    if (cpu.category[row] == CpuCategory::kPythonFunction) {
      ++e.py_in_gap;
      continue;
    }
    ++e.ops_in_gap;
    if (cpu.inputs[row] != timeline::CpuRanges::kNoInputs) {
      e.inputs_in_gap += static_cast<int32_t>(tl.op_inputs.num_inputs(cpu.inputs[row]));
    }
  }
}

// Host events: the process's API calls that launch, copy, set, synchronize or allocate,
// in host order; sets g.tail from `host_end`. Returns the event of each RuntimeCalls row.
std::unordered_map<int32_t, int32_t> add_host_events(const Timeline& tl, const TimelineIndex& ix,
                                                     const HostActivity& act, TimeNs host_end, StepGraph& g) {
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
    e.gap_loader = act.loader.overlap(prev_end, e.start);
    count_gap_ops(tl, act.op_rows, op_cursor, e);
    if (act.optimizer.containing(e.start) != nullptr) e.flags |= kInOptimizer;
    auto win = std::upper_bound(g.window_cpu_start.begin(), g.window_cpu_start.end(), rc.start[r]);
    e.window = static_cast<int32_t>(win - g.window_cpu_start.begin()) - 1;
    event_of_row.emplace(e.rc_row, static_cast<int32_t>(g.host.size()));
    g.host.push_back(e);
    prev_end = e.end;
    prev_tid = rc.tid[r];
  }
  g.tail = std::max<TimeNs>(0, host_end - prev_end);
  return event_of_row;
}

// The host event that launched GpuOps row i (-1: none in the span), or nullopt when the op
// is not part of the graph: launched outside the span (or by another process) it is kept
// where it ran, if inside.
std::optional<int32_t> launching_event(const Timeline& tl, const TimelineIndex& ix, const StepGraph& g,
                                       const std::unordered_map<int32_t, int32_t>& event_of_row, size_t i) {
  const auto& ops = tl.gpu_ops;
  const auto& rc = tl.runtime_calls;
  const int32_t lr = ix.launch_row[i];
  if (lr >= 0) {
    auto it = event_of_row.find(lr);
    if (it != event_of_row.end()) return it->second;
  }
  const bool other_pid = lr >= 0 && rc.pid[lr] != g.pid;
  if (other_pid || ops.end[i] <= g.origin || ops.start[i] >= g.span_end) return std::nullopt;
  if (lr >= 0 && rc.start[lr] >= g.span_end) return std::nullopt;
  return -1;
}

// GPU nodes: the ops launched by the host events, and the unlaunched ops of the span,
// queued per lane (device, stream); the ops queued ahead of a lane's first launched op
// are its backlog.
void add_gpu_nodes(const Timeline& tl, const TimelineIndex& ix,
                   const std::unordered_map<int32_t, int32_t>& event_of_row, StepGraph& g) {
  const auto& ops = tl.gpu_ops;
  std::map<std::pair<int16_t, int32_t>, int32_t> lane_of;
  for (size_t i = 0; i < ops.size(); ++i) {
    const int16_t d = ops.device[i];
    if (d < 0 || static_cast<size_t>(d) >= tl.devices.size() || tl.devices[d].source_index != g.source) continue;
    const std::optional<int32_t> launch = launching_event(tl, ix, g, event_of_row, i);
    if (!launch) continue;
    GpuNode n;
    n.row = static_cast<uint32_t>(i);
    n.launch = *launch;
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
}

// Launch latency: call start -> op start for ops whose stream was idle at launch.
TimeNs launch_latency(const StepGraph& g) {
  std::vector<TimeNs> lat;
  for (const auto& lane : g.lanes) {
    TimeNs lane_end = std::numeric_limits<TimeNs>::min();
    for (int32_t k : lane) {
      const GpuNode& n = g.gpu[k];
      if (n.launch >= 0 && lane_end < g.host[n.launch].start) lat.push_back(n.start - g.host[n.launch].start);
      lane_end = std::max(lane_end, n.start + n.dur);
    }
  }
  if (lat.empty()) return kDefaultLaunchLatencyNs;
  // The lower quartile: an op that also waited for another stream's event looks like a
  // slow launch here (its dependency is found below, with this latency).
  std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(lat.size() / 4), lat.end());
  return std::clamp<TimeNs>(lat[lat.size() / 4], 500, 50'000);
}

// (end, GpuNode) pairs, sorted.
using NodeEnds = std::vector<std::pair<TimeNs, int32_t>>;

// Ends of every node, by device, to find what an op waited for.
std::map<int16_t, NodeEnds> node_ends_by_device(const Timeline& tl, const StepGraph& g) {
  std::map<int16_t, NodeEnds> out;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    out[tl.gpu_ops.device[g.gpu[k].row]].emplace_back(g.gpu[k].start + g.gpu[k].dur, static_cast<int32_t>(k));
  }
  for (auto& [d, v] : out) std::sort(v.begin(), v.end());
  return out;
}

// Ends of every node, to find what a blocking call waited for.
NodeEnds all_node_ends(const StepGraph& g) {
  NodeEnds out;
  for (size_t k = 0; k < g.gpu.size(); ++k) out.emplace_back(g.gpu[k].start + g.gpu[k].dur, static_cast<int32_t>(k));
  std::sort(out.begin(), out.end());
  return out;
}

// Cross-stream dependencies: an op that started later than its launch and its stream
// allowed waited for the op of another lane that ended just before it.
void find_cross_stream_deps(const Timeline& tl, StepGraph& g) {
  auto ends_by_device = node_ends_by_device(tl, g);
  for (const auto& lane : g.lanes) {
    TimeNs prev = std::numeric_limits<TimeNs>::min();
    for (int32_t k : lane) {
      GpuNode& n = g.gpu[k];
      const TimeNs ready = n.launch >= 0 ? g.host[n.launch].start + g.launch_latency : n.start;
      const TimeNs allowed = std::max(ready, prev);
      prev = std::max(prev, n.start + n.dur);
      if (n.start <= allowed + kDepToleranceNs) continue;
      const auto& v = ends_by_device[tl.gpu_ops.device[n.row]];
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
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Makes `n` depend on the latest-ending of the `waited` nodes on another lane that ended
// before it started (unless it already depends on one that ended later).
void depend_on_latest(const StepGraph& g, const std::vector<int32_t>& waited, GpuNode& n) {
  auto end_of = [&](int32_t k) { return g.gpu[k].start + g.gpu[k].dur; };
  for (int32_t w : waited) {
    if (g.gpu[w].lane == n.lane || end_of(w) > n.start + kEndToleranceNs) continue;
    if (n.dep < 0 || end_of(w) > end_of(n.dep)) n.dep = w;
  }
}

// The launches of the graph's nodes, as marks in host time; the caller adds its own.
enum MarkKind : uint8_t { kLaunched, kRecord, kWait };
struct Mark {
  TimeNs t;
  MarkKind kind;
  int32_t node;      // kLaunched: the node; kWait from a synchronization record: its stream
  int32_t row = -1;  // kWait from a synchronization record: its SyncEvents row
};
std::vector<Mark> launch_marks(const StepGraph& g) {
  std::vector<Mark> marks;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    if (g.gpu[k].launch >= 0) marks.push_back({g.host[g.gpu[k].launch].start, kLaunched, static_cast<int32_t>(k)});
  }
  return marks;
}

// The node an event recorded on `stream` by the call of `correlation` marks: the last op
// launched on that stream before the record call (correlations grow with launch order
// within a process). -1: none in the graph (the event came before the analyzed steps).
int32_t recorded_before(const Timeline& tl, const StepGraph& g, const std::vector<int32_t>& lane_stream, int32_t stream,
                        int64_t correlation) {
  int32_t best = -1;
  for (size_t l = 0; l < g.lanes.size(); ++l) {
    if (lane_stream[l] != stream) continue;
    const auto& lane = g.lanes[l];
    const auto it = std::partition_point(lane.begin(), lane.end(),
                                         [&](int32_t k) { return tl.gpu_ops.correlation[g.gpu[k].row] < correlation; });
    if (it == lane.begin()) continue;
    const int32_t k = *std::prev(it);
    if (best < 0 || tl.gpu_ops.correlation[g.gpu[k].row] > tl.gpu_ops.correlation[g.gpu[best].row]) best = k;
  }
  return best;
}

// Waits without records: the tracer of `run --trace` does not record cudaEventRecord or
// cudaStreamWaitEvent calls, but CUPTI writes a synchronization record for each wait that
// names the waiting stream. The event a wait on stream S took is read as recorded after the
// op launched last before it on another stream; consecutive waits of S before its next
// launch (a join: one stream waiting for several) take the last ops of different streams,
// latest first. A pick the recorded times contradict (it ended after the op that would wait
// for it started) is dropped by depend_on_latest. On lstm_lm's whole-job CUPTI trace (cuDNN's
// LSTM over 11 streams; docs/VALIDATION.md) the captured step then keeps its streams in order
// as the torch.profiler trace's records and waits do. Where the tracer kept the event's
// record (CUPTI's CUDA_EVENT activity, since 2026-12-05), a wait takes the op that record
// marks instead of reading it from the launch order.
void find_wait_record_deps(const Timeline& tl, StepGraph& g) {
  const auto& se = tl.sync_events;
  std::vector<Mark> marks = launch_marks(g);
  const size_t launches = marks.size();
  for (size_t i = 0; i < se.size(); ++i) {
    if (se.kind[i] != timeline::SyncKind::kStreamWaitEvent || se.pid[i] != g.pid || se.start[i] < g.host_from ||
        se.start[i] >= g.span_end)
      continue;
    marks.push_back({se.start[i], kWait, se.stream[i], static_cast<int32_t>(i)});
  }
  if (marks.size() == launches) return;
  std::stable_sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.t < b.t; });
  std::vector<int32_t> lane_stream(g.lanes.size(), -1), last_on_lane(g.lanes.size(), -1);
  for (size_t l = 0; l < g.lanes.size(); ++l) {
    if (!g.lanes[l].empty()) lane_stream[l] = tl.gpu_ops.stream[g.gpu[g.lanes[l].front()].row];
  }
  std::unordered_map<int32_t, std::vector<int32_t>> waited;  // per stream, until its next launch
  auto launched_at = [&](int32_t k) { return g.host[g.gpu[k].launch].start; };
  for (const Mark& m : marks) {
    if (m.kind == kLaunched) {
      GpuNode& n = g.gpu[m.node];
      auto it = waited.find(lane_stream[n.lane]);
      if (it != waited.end()) {
        depend_on_latest(g, it->second, n);
        waited.erase(it);
      }
      last_on_lane[n.lane] = m.node;
      continue;
    }
    std::vector<int32_t>& w = waited[m.node];
    if (se.event_stream[m.row] >= 0) {  // the tracer kept the event's record: no reading needed
      const int32_t k = recorded_before(tl, g, lane_stream, se.event_stream[m.row], se.event_correlation[m.row]);
      if (k >= 0 && lane_stream[g.gpu[k].lane] != m.node) w.push_back(k);
      continue;
    }
    int32_t pick = -1;
    for (size_t l = 0; l < g.lanes.size(); ++l) {
      const int32_t k = last_on_lane[l];
      if (k < 0 || lane_stream[l] == m.node || std::find(w.begin(), w.end(), k) != w.end()) continue;
      if (pick < 0 || launched_at(k) > launched_at(pick)) pick = k;
    }
    if (pick >= 0) w.push_back(pick);
  }
}

// Event dependencies. PyTorch and cuDNN order work across streams with
// cudaEventRecord(ev, s1) then cudaStreamWaitEvent(s2, ev); a trace holds neither the
// stream nor the event of those calls, so they are read from the launch order: a record
// marks the node launched last before it, a wait takes the latest record not yet waited
// on, and the next node launched after waits runs after the latest-ending of the nodes
// they marked on other lanes. The eager trace hides such a dependency behind launch times
// when the host is behind the GPU (cuDNN's LSTM spreads each step over 11 streams, each
// op launched after the op it waits for ended); once launches go (cuda-graphs) the
// streams would otherwise overlap more than their events let them.
void find_event_deps(const Timeline& tl, StepGraph& g) {
  const auto& rc = tl.runtime_calls;
  std::vector<Mark> marks = launch_marks(g);
  const size_t launches = marks.size();
  for (size_t r = 0; r < rc.size(); ++r) {
    if (rc.pid[r] != g.pid || rc.start[r] < g.host_from || rc.start[r] >= g.span_end) continue;
    const auto name = tl.strings.view(rc.name[r]);
    if (starts_with(name, "cudaEventRecord") || starts_with(name, "cuEventRecord")) {
      marks.push_back({rc.start[r], kRecord, -1});
    } else if (starts_with(name, "cudaStreamWaitEvent") || starts_with(name, "cuStreamWaitEvent")) {
      marks.push_back({rc.start[r], kWait, -1});
    }
  }
  if (marks.size() == launches) {  // no event calls recorded: the waits' synchronization records, if any
    find_wait_record_deps(tl, g);
    return;
  }
  std::stable_sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.t < b.t; });
  int32_t last = -1;
  std::vector<int32_t> recorded, waited;  // records not yet waited on; waits before the next launch
  for (const Mark& m : marks) {
    if (m.kind == kRecord) {
      if (last >= 0) recorded.push_back(last);
    } else if (m.kind == kWait) {
      if (!recorded.empty()) {
        waited.push_back(recorded.back());
        recorded.pop_back();
      }
    } else {
      depend_on_latest(g, waited, g.gpu[m.node]);
      waited.clear();
      last = m.node;
    }
  }
}

// The pageable copy each host event launched (-1: none).
std::vector<int32_t> pageable_copy_of_event(const Timeline& tl, const StepGraph& g) {
  const auto& ops = tl.gpu_ops;
  std::vector<int32_t> own_copy(g.host.size(), -1);
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const GpuNode& n = g.gpu[k];
    if (n.launch < 0 || ops.kind[n.row] != timeline::GpuOpKind::kMemcpy) continue;
    const bool pageable = ops.src_kind[n.row] == timeline::MemKind::kPageable ||
                          ops.dst_kind[n.row] == timeline::MemKind::kPageable;
    if (pageable) own_copy[n.launch] = static_cast<int32_t>(k);
  }
  return own_copy;
}

// For a call that blocked on its own pageable copy (returned once the copy was at least
// half done), notes that wait in `e`; false otherwise.
bool waits_for_own_copy(const StepGraph& g, int32_t copy, HostEvent& e) {
  if (copy < 0) return false;
  const GpuNode& n = g.gpu[copy];
  if (e.end < n.start + n.dur / 2) return false;
  e.waits_for = copy;
  e.after_wait = std::max<TimeNs>(0, e.end - (n.start + n.dur));
  if (e.api == timeline::ApiClass::kMemcpyAsync) e.flags |= kBlockingCopy;
  return true;
}

// For host event i, synchronizing or long, the GPU op whose end it waited for, if any.
void find_blocking_wait(const StepGraph& g, const NodeEnds& all_ends, size_t i, HostEvent& e) {
  const TimeNs dur = e.end - e.start;
  const bool syncing = blocks_by_nature(e.api);
  if (!syncing && dur < kLongCallNs) return;
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

// Blocking calls: the GPU op whose end a call waited for. An async copy from or to
// pageable memory is staged through a driver buffer: the call returns when the copy is
// (nearly) done, a few us before its record ends. Synchronizing calls (synchronize,
// synchronous copies, cudaFree, cudaMalloc) wait for the last op that ended while they
// ran; any other call that long waited when most of it was waiting (a full launch queue).
void find_blocking_calls(const Timeline& tl, StepGraph& g) {
  const NodeEnds all_ends = all_node_ends(g);
  const std::vector<int32_t> own_copy = pageable_copy_of_event(tl, g);
  for (size_t i = 0; i < g.host.size(); ++i) {
    HostEvent& e = g.host[i];
    if (waits_for_own_copy(g, own_copy[i], e)) continue;
    find_blocking_wait(g, all_ends, i, e);
  }
}

}  // namespace

StepGraph build_step_graph(const Timeline& tl, const TimelineIndex& ix, const StepWindows& w) {
  StepGraph g;
  if (w.steps.empty()) return g;
  const TimeNs host_end = set_windows(w, g);
  const HostActivity act = host_activity(tl, g);
  const auto event_of_row = add_host_events(tl, ix, act, host_end, g);
  add_gpu_nodes(tl, ix, event_of_row, g);
  g.launch_latency = launch_latency(g);
  find_cross_stream_deps(tl, g);
  find_event_deps(tl, g);
  find_blocking_calls(tl, g);
  return g;
}

}  // namespace chokepoint::analyses::whatif
