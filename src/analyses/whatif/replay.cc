#include "analyses/whatif/replay.h"

#include <algorithm>
#include <limits>

namespace chokepoint::analyses::whatif {

namespace {

constexpr TimeNs kUnset = std::numeric_limits<TimeNs>::min();

// The GPU side of the simulation: each lane's ops are started in order once their
// launch has been replayed; a node's start is the latest of its ready time, its lane's
// previous end (and start + spacing) and its cross-lane dependency's end.
class Gpu {
 public:
  Gpu(const StepGraph& g, const Plan& p, const std::vector<TimeNs>& call_start)
      : g_(g),
        p_(p),
        call_start_(call_start),
        start_(g.gpu.size(), kUnset),
        end_(g.gpu.size(), kUnset),
        next_(g.lanes.size(), 0) {}

  // Schedules every node of k's lane up to k whose launch (up to host event `limit`) has
  // been replayed. False when k itself cannot be scheduled yet.
  bool ensure(int32_t k, int32_t limit) {
    std::vector<int32_t> stack{k};
    if (lane_busy_.size() != g_.lanes.size()) lane_busy_.assign(g_.lanes.size(), 0);
    lane_busy_[g_.gpu[k].lane] = 1;
    while (!stack.empty()) {
      const int32_t top = stack.back();
      const int32_t lane_id = g_.gpu[top].lane;
      const auto& lane = g_.lanes[lane_id];
      bool pushed = false;
      while (end_[top] == kUnset) {
        const int32_t j = lane[next_[lane_id]];
        const int32_t launch = p_.node_launch[j];
        if (launch > limit) {
          for (int32_t s : stack) lane_busy_[g_.gpu[s].lane] = 0;  // leave no lane marked
          return false;
        }
        const int32_t dep = g_.gpu[j].dep;
        // A dependency on a lane already being scheduled below on the stack would be a
        // cycle (two ops that ended within the timestamp tolerance of each other): dropped.
        if (dep >= 0 && end_[dep] == kUnset && !p_.node_removed[dep] && can_schedule(dep, limit) &&
            !lane_busy_[g_.gpu[dep].lane]) {
          stack.push_back(dep);
          lane_busy_[g_.gpu[dep].lane] = 1;
          pushed = true;
          break;
        }
        place(j, launch);
        ++next_[lane_id];
      }
      if (!pushed) {
        stack.pop_back();
        lane_busy_[lane_id] = 0;
      }
    }
    return true;
  }

  // Every node (after the host is done).
  void finish(int32_t limit) {
    for (size_t l = 0; l < g_.lanes.size(); ++l) {
      if (!g_.lanes[l].empty()) ensure(g_.lanes[l].back(), limit);
    }
  }

  TimeNs end(int32_t k) const { return end_[k]; }
  const std::vector<TimeNs>& starts() const { return start_; }
  const std::vector<TimeNs>& ends() const { return end_; }

 private:
  bool can_schedule(int32_t k, int32_t limit) const { return p_.node_launch[k] <= limit; }

  void place(int32_t j, int32_t launch) {
    const GpuNode& n = g_.gpu[j];
    // An op launched before the host replay begins (the backlog a GPU-bound job has
    // queued) is ready from the start; its stream order places it.
    TimeNs t = launch >= 0 ? call_start_[launch] + p_.launch_latency : (n.backlog ? g_.origin : n.start);
    const auto& lane = g_.lanes[n.lane];
    const size_t pos = next_[n.lane];
    if (pos > 0) {
      const int32_t prev = lane[pos - 1];
      t = std::max(t, lane_end_of(n.lane));
      if (!p_.node_removed[prev]) t = std::max(t, start_[prev] + p_.node_spacing[j]);
    }
    if (n.dep >= 0 && end_[n.dep] != kUnset && !p_.node_removed[n.dep]) t = std::max(t, end_[n.dep]);
    if (p_.node_removed[j]) {
      start_[j] = end_[j] = t;
      return;
    }
    start_[j] = t;
    end_[j] = t + p_.node_dur[j];
    lane_end_[n.lane] = std::max(lane_end_of(n.lane), end_[j]);
  }

  TimeNs lane_end_of(int32_t lane) {
    if (lane_end_.size() < g_.lanes.size()) lane_end_.assign(g_.lanes.size(), kUnset);
    return lane_end_[lane];
  }

  const StepGraph& g_;
  const Plan& p_;
  const std::vector<TimeNs>& call_start_;
  std::vector<TimeNs> start_, end_;
  std::vector<size_t> next_;
  std::vector<TimeNs> lane_end_;
  std::vector<uint8_t> lane_busy_;
};

}  // namespace

Plan Plan::baseline(const StepGraph& g) {
  Plan p;
  const size_t n = g.host.size();
  p.gap.resize(n);
  p.gap_loader.resize(n);
  p.dur.resize(n);
  p.waits.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const HostEvent& e = g.host[i];
    p.gap[i] = e.gap;
    p.gap_loader[i] = std::min(e.gap, e.gap_loader);
    p.dur[i] = e.waits_for >= 0 ? e.after_wait : e.end - e.start;
    p.waits[i] = e.waits_for >= 0 ? 1 : 0;
  }
  const size_t m = g.gpu.size();
  p.node_dur.resize(m);
  p.node_removed.assign(m, 0);
  p.node_launch.resize(m);
  p.node_spacing.assign(m, 0);
  for (size_t k = 0; k < m; ++k) {
    p.node_dur[k] = g.gpu[k].dur;
    p.node_launch[k] = g.gpu[k].launch;
  }
  p.tail = g.tail;
  p.launch_latency = g.launch_latency;
  return p;
}

ReplayResult replay(const StepGraph& g, const Plan& p) {
  ReplayResult r;
  const size_t n = g.host.size();
  std::vector<TimeNs> call_start(n, 0), call_end(n, 0);
  Gpu gpu(g, p, call_start);
  TimeNs h = g.host_from;
  for (size_t i = 0; i < n; ++i) {
    h += std::max<TimeNs>(0, p.gap[i]);
    call_start[i] = h;
    const HostEvent& e = g.host[i];
    if (p.waits[i] && e.waits_for >= 0 && gpu.ensure(e.waits_for, static_cast<int32_t>(i))) {
      h = std::max(h, gpu.end(e.waits_for)) + std::max<TimeNs>(0, p.dur[i]);
    } else {
      h += std::max<TimeNs>(0, p.dur[i]);
    }
    call_end[i] = h;
  }
  h += std::max<TimeNs>(0, p.tail);
  gpu.finish(static_cast<int32_t>(n));

  // Totals and the GPU's busy union.
  TimeNs last = h;
  std::vector<std::pair<TimeNs, TimeNs>> busy;
  busy.reserve(g.gpu.size());
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    if (p.node_removed[k] || gpu.ends()[k] == kUnset) continue;
    busy.emplace_back(gpu.starts()[k], gpu.ends()[k]);
    last = std::max(last, gpu.ends()[k]);
  }
  std::sort(busy.begin(), busy.end());
  TimeNs cur_s = kUnset, cur_e = kUnset;
  for (const auto& [s, e] : busy) {
    if (cur_e == kUnset || s > cur_e) {
      if (cur_e != kUnset) r.gpu_busy += cur_e - cur_s;
      cur_s = s, cur_e = e;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (cur_e != kUnset) r.gpu_busy += cur_e - cur_s;
  r.total = last - g.origin;
  r.host_end = h - g.origin;

  // Step ends: a window ends when its last call and the GPU work it launched are done.
  r.step_end.assign(g.window_start.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    const int32_t w = g.host[i].window;
    if (w >= 0) r.step_end[w] = std::max(r.step_end[w], call_end[i] - g.origin);
  }
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const int32_t launch = g.gpu[k].launch;  // the step it belongs to, whatever launches it now
    if (launch < 0 || p.node_removed[k] || gpu.ends()[k] == kUnset) continue;
    const int32_t w = g.host[launch].window;
    if (w >= 0) r.step_end[w] = std::max(r.step_end[w], gpu.ends()[k] - g.origin);
  }
  for (size_t w = 1; w < r.step_end.size(); ++w) r.step_end[w] = std::max(r.step_end[w], r.step_end[w - 1]);
  if (!r.step_end.empty()) r.step_end.back() = std::max(r.step_end.back(), r.total);
  return r;
}

double steady_step_ns(const ReplayResult& r) {
  const size_t n = r.step_end.size();
  if (n >= 3) return static_cast<double>(r.step_end.back() - r.step_end.front()) / static_cast<double>(n - 1);
  return static_cast<double>(r.total) / static_cast<double>(std::max<size_t>(1, n));
}

}  // namespace chokepoint::analyses::whatif
