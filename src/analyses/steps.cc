#include "analyses/steps.h"

#include "analyses/step_inference.h"

#include <algorithm>
#include <limits>
#include <map>

namespace chokepoint::analyses {

using timeline::Timeline;

namespace {

// The thread that launched most GPU work: the one to judge when there are no steps.
std::pair<int32_t, int32_t> main_launch_thread(const Timeline& tl, const TimelineIndex& ix) {
  std::map<std::pair<int32_t, int32_t>, int64_t> count;
  for (int32_t r : ix.launch_row) {
    if (r >= 0) ++count[{tl.runtime_calls.pid[r], tl.runtime_calls.tid[r]}];
  }
  std::pair<int32_t, int32_t> best{-1, -1};
  int64_t n = -1;
  for (const auto& [k, c] : count) {
    if (c > n) n = c, best = k;
  }
  return best;
}

StepWindows whole_trace(const Timeline& tl, const TimelineIndex& ix) {
  StepWindows w;
  w.whole_trace = true;
  w.method = "whole trace (no step annotations)";
  TimeNs lo = std::numeric_limits<TimeNs>::max(), hi = std::numeric_limits<TimeNs>::min();
  auto widen = [&](const std::vector<TimeNs>& s, const std::vector<TimeNs>& e) {
    if (s.empty()) return;
    lo = std::min(lo, s.front());  // tables are sorted by start
    for (TimeNs t : e) hi = std::max(hi, t);
  };
  widen(tl.gpu_ops.start, tl.gpu_ops.end);
  widen(tl.runtime_calls.start, tl.runtime_calls.end);
  if (lo >= hi) return w;  // nothing with a duration
  StepWindow s;
  auto [pid, tid] = main_launch_thread(tl, ix);
  s.pid = pid;
  s.tid = tid;
  s.cpu_start = s.start = lo;
  s.cpu_end = s.end = hi;
  s.gpu_end = tl.gpu_ops.size() ? hi : -1;
  w.steps.push_back(s);
  return w;
}

// Windows of one process are back to back: a window starts at its CPU start or where the
// previous one ended, whichever is later, and ends at the later of its CPU end and the end
// of the GPU work launched in it.
void chain(StepWindow& s, TimeNs& prev_end) {
  s.start = std::max(s.cpu_start, prev_end);
  s.end = std::max({s.cpu_end, s.gpu_end, s.start});
  prev_end = s.end;
}

// The profiler records GPU work from the moment it starts; work launched before that
// (during its warm-up) still runs at the start of the first step and has no launch in
// the trace. That work is the tail of an earlier step, and what the GPU did before it is
// unknown: the first window starts once it is done.
void clip_to_recorded_gpu_work(const Timeline& tl, const TimelineIndex& ix, StepWindow& s) {
  const auto& g = tl.gpu_ops;
  TimeNs tail_end = s.start;
  for (size_t i = 0; i < g.size() && g.start[i] < s.end; ++i) {
    const int16_t d = g.device[i];
    const int32_t src = d >= 0 && static_cast<size_t>(d) < tl.devices.size() ? tl.devices[d].source_index : 0;
    if (src != s.source || g.end[i] <= s.start) continue;
    if (ix.launch_row[i] >= 0) break;  // the first op launched inside the trace
    tail_end = std::max(tail_end, g.end[i]);
  }
  s.start = std::min(tail_end, s.end);
}

constexpr size_t kWarmupShare = 10;  // warm-up: the first tenth of the cycles ...
constexpr TimeNs kWarmupFactor = 3;  // ... those over 3x the median cycle

// Windows of steps inferred from the repeating GPU op sequence: the cycle's CPU span runs
// from the issue of its first op to the issue of the next cycle's first op; back to back
// per source like annotated steps.
StepWindows inferred_windows(const Timeline& tl, const TimelineIndex& ix) {
  StepWindows w;
  const std::vector<InferredSteps> inferred = infer_steps(tl, ix);
  if (inferred.empty()) return whole_trace(tl, ix);
  int64_t cycles = 0, warmup = 0, other = 0;
  for (const auto& src : inferred) {
    TimeNs prev_end = std::numeric_limits<TimeNs>::min();
    int64_t number = 0;
    std::vector<StepWindow> mine;
    for (const auto& c : src.cycles) {
      StepWindow s;
      s.number = ++number;
      s.source = src.source;
      s.pid = c.pid;
      s.tid = c.tid;
      s.cpu_start = c.cpu_start;
      s.cpu_end = c.cpu_end;
      s.gpu_end = c.gpu_end;
      chain(s, prev_end);
      mine.push_back(s);
    }
    // Warm-up: the first iterations of a run also autotune (cuDNN, cuBLAS), allocate, or
    // start a profiler; one of 1.1 s among 13 ms steps is 28% of the analyzed time. Cycles
    // in the first tenth of the run that last over 3x the median are left out, with the
    // cycles before them.
    std::vector<TimeNs> d;
    for (const auto& s : mine) d.push_back(s.duration());
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    const TimeNs median = d[d.size() / 2];
    const size_t early = std::max<size_t>(1, mine.size() / kWarmupShare);
    // So is the whole leading run of slow cycles, however long, while it is less than half
    // of them (cuDNN's benchmark mode autotunes each new shape: cnn_channels_last's first 7
    // of 32 cycles took 0.44-0.63 s against 56 ms, and the estimates were made from them).
    size_t lead = 0;
    while (lead < mine.size() && mine[lead].duration() > kWarmupFactor * median) ++lead;
    if (2 * lead > mine.size()) lead = 0;  // most cycles slow: that is the run, not its warm-up
    // The warm-up is a prefix: a quick cycle between slow ones goes with them, or the steps
    // kept would have a hole that the replay counts as step time (empty_cache's first 4
    // cycles: 3 slow ones and one of 27 ms, and a 480 ms hole after it).
    size_t cut = lead;
    for (size_t i = 0; i < early && i < mine.size(); ++i) {
      if (mine[i].duration() > kWarmupFactor * median) cut = std::max(cut, i + 1);
    }
    warmup += static_cast<int64_t>(cut);
    for (size_t i = cut; i < mine.size(); ++i) w.steps.push_back(mine[i]);
    cycles += static_cast<int64_t>(src.cycles.size());
    other += src.other_cycles;
  }
  w.inferred = true;
  const InferredSteps& first = inferred.front();
  w.method = (first.anchored ? "inferred from the op that begins each iteration after a pause (the op sequence "
                               "changes between iterations: dynamic shapes; " +
                                   std::to_string(first.period_ops) + " ops per step on median, " +
                                   std::to_string(cycles) + " whole cycles"
                             : "inferred from the repeating GPU op sequence (" + std::to_string(first.period_ops) +
                                   " ops per step, " + std::to_string(cycles) + " whole cycles, " +
                                   std::to_string(static_cast<int>(first.match * 100.0 + 0.5)) + "% of ops repeat") +
             (warmup > 0 ? ", " + std::to_string(warmup) + " warm-up cycle" + (warmup > 1 ? "s" : "") + " left out"
                         : "") +
             (other > 0 ? ", " + std::to_string(other) + " cycle" + (other > 1 ? "s" : "") +
                              " of other work (evaluation, checkpoints) left out"
                        : "") +
             ")";
  return w;
}

}  // namespace

StepWindows compute_step_windows(const Timeline& tl, const TimelineIndex& ix) {
  const auto& st = tl.steps;
  if (st.size() == 0) return inferred_windows(tl, ix);

  StepWindows w;
  const bool nvtx = std::any_of(st.how.begin(), st.how.end(),
                                [](timeline::StepSource h) { return h == timeline::StepSource::kNvtx; });
  w.method = nvtx ? "NVTX step ranges" : "ProfilerStep#N annotations";
  w.steps.reserve(st.size());
  for (size_t i = 0; i < st.size(); ++i) {
    StepWindow s;
    s.number = st.number[i];
    s.source = st.source_index[i];
    s.pid = st.pid[i];
    s.tid = st.tid[i];
    s.cpu_start = st.start[i];
    s.cpu_end = st.end[i];
    w.steps.push_back(s);
  }
  // Steps of one process, sorted by start (the table is), so a launch at time t belongs to
  // the last step of its pid that started at or before t, if t is before that step's end.
  // Per trace file too: two files of one process are two profiler windows (a schedule with
  // repeat), each with its own start and warm-up tail (issue 44: the second window's first
  // step kept the tail and read 29 ms against 12.7 ms).
  std::map<std::pair<int32_t, int32_t>, std::vector<size_t>> by_pid;
  for (size_t i = 0; i < w.steps.size(); ++i) by_pid[{w.steps[i].source, w.steps[i].pid}].push_back(i);
  const auto& g = tl.gpu_ops;
  const auto& rc = tl.runtime_calls;
  for (size_t i = 0; i < g.size(); ++i) {
    const int32_t r = ix.launch_row[i];
    if (r < 0) continue;
    const int16_t d = g.device[i];
    const int32_t src = d >= 0 && static_cast<size_t>(d) < tl.devices.size() ? tl.devices[d].source_index : 0;
    auto it = by_pid.find({src, rc.pid[r]});
    if (it == by_pid.end()) continue;
    const auto& rows = it->second;
    const TimeNs t = rc.start[r];
    auto pos = std::upper_bound(rows.begin(), rows.end(), t,
                                [&](TimeNs v, size_t k) { return v < w.steps[k].cpu_start; });
    if (pos == rows.begin()) continue;
    StepWindow& s = w.steps[*(pos - 1)];
    if (t < s.cpu_end) s.gpu_end = std::max(s.gpu_end, g.end[i]);
  }
  // Windows: per process, back to back.
  for (auto& [key, rows] : by_pid) {
    TimeNs prev_end = std::numeric_limits<TimeNs>::min();
    for (size_t k : rows) chain(w.steps[k], prev_end);
    clip_to_recorded_gpu_work(tl, ix, w.steps[rows.front()]);
  }
  return w;
}

}  // namespace chokepoint::analyses

namespace chokepoint::analyses {
namespace {

// Windows sorted by start for one key (a source or a pid).
struct WindowList {
  std::vector<TimeNs> start, end;
  std::vector<int32_t> index;
  int32_t find(TimeNs t) const {
    auto it = std::upper_bound(start.begin(), start.end(), t);
    if (it == start.begin()) return -1;
    size_t k = static_cast<size_t>(it - start.begin()) - 1;
    return t < end[k] ? index[k] : -1;
  }
};

template <typename Key>
std::map<Key, WindowList> lists_by(const StepWindows& w, Key (*key)(const StepWindow&)) {
  std::vector<size_t> order(w.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return w.steps[a].start < w.steps[b].start; });
  std::map<Key, WindowList> out;
  for (size_t i : order) {
    auto& l = out[key(w.steps[i])];
    l.start.push_back(w.steps[i].start);
    l.end.push_back(w.steps[i].end);
    l.index.push_back(static_cast<int32_t>(i));
  }
  return out;
}

}  // namespace

WindowMembership assign_windows(const Timeline& tl, const StepWindows& w) {
  WindowMembership m;
  const auto& g = tl.gpu_ops;
  const auto& rc = tl.runtime_calls;
  m.gpu_op.assign(g.size(), -1);
  m.runtime_call.assign(rc.size(), -1);
  if (w.steps.empty()) return m;
  if (w.whole_trace) {
    m.gpu_op.assign(g.size(), 0);
    m.runtime_call.assign(rc.size(), 0);
    return m;
  }
  auto by_source = lists_by<int32_t>(w, [](const StepWindow& s) { return s.source; });
  auto by_pid = lists_by<int32_t>(w, [](const StepWindow& s) { return s.pid; });
  for (size_t i = 0; i < g.size(); ++i) {
    const int16_t d = g.device[i];
    const int32_t src = d >= 0 && static_cast<size_t>(d) < tl.devices.size() ? tl.devices[d].source_index : 0;
    auto it = by_source.find(src);
    if (it != by_source.end()) m.gpu_op[i] = it->second.find(g.start[i]);
  }
  for (size_t i = 0; i < rc.size(); ++i) {
    auto it = by_pid.find(rc.pid[i]);
    if (it != by_pid.end()) m.runtime_call[i] = it->second.find(rc.start[i]);
  }
  return m;
}

}  // namespace chokepoint::analyses
