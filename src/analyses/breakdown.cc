#include "analyses/breakdown.h"
#include "analyses/idle_gaps.h"

#include <algorithm>
#include <numeric>

namespace chokepoint::analyses {

using timeline::CopyKind;
using timeline::Timeline;

namespace {

// A gap whose next op was queued before the GPU went idle and still waited longer than
// this is a device-side dependency (event wait, another stream), not launch latency.
// HTA uses 30 us for the same split ("kernel_wait" below it).
constexpr TimeNs kGpuWaitNs = 30'000;
// GPU and CPU timestamps come from one clock (CUPTI normalizes them); allow this much skew
// when asking "was the thread blocked in a sync when the GPU ran dry?".
constexpr TimeNs kDrainToleranceNs = 2'000;

using Idle = std::array<TimeNs, kNumIdleCauses>;

void add(Idle& idle, IdleCause c, TimeNs v) { idle[static_cast<int>(c)] += v; }

bool covers(const Intervals& iv, TimeNs t) {
  return iv.containing(t) != nullptr || iv.containing(t - kDrainToleranceNs) != nullptr;
}

// Splits [a, b) by what the thread was doing, highest priority first.
void split_host_time(const ThreadActivity* th, TimeNs a, TimeNs b, Idle& part) {
  if (b <= a) return;
  if (th == nullptr) {
    add(part, IdleCause::kHostWork, b - a);
    return;
  }
  const Intervals* sets[] = {&th->dataloader, &th->sync, &th->allocator, &th->api, &th->op};
  constexpr IdleCause causes[] = {IdleCause::kInput, IdleCause::kSync, IdleCause::kAllocator,
                                  IdleCause::kLaunchOverhead, IdleCause::kLaunchOverhead};
  std::vector<TimeNs> cuts{a, b};
  for (const Intervals* s : sets) {
    s->for_each_in(a, b, [&](TimeNs x, TimeNs y) {
      cuts.push_back(x);
      cuts.push_back(y);
    });
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const TimeNs x = cuts[i], len = cuts[i + 1] - cuts[i];
    IdleCause c = IdleCause::kHostWork;
    for (int k = 0; k < 5; ++k) {
      if (sets[k]->containing(x) != nullptr) {
        c = causes[k];
        break;
      }
    }
    add(part, c, len);
  }
}

struct Attributor {
  const Timeline& tl;
  const TimelineIndex& ix;

  void gap(TimeNs g0, TimeNs g1, int64_t next, Idle& idle) const {
    if (g1 <= g0) return;
    if (next < 0) return add(idle, IdleCause::kNothingQueued, g1 - g0);
    const int32_t r = ix.launch_row[next];
    if (r < 0) return add(idle, IdleCause::kUnknown, g1 - g0);
    const auto& rc = tl.runtime_calls;
    const TimeNs launch = rc.start[r];
    if (launch <= g0) {
      return add(idle, g1 - g0 > kGpuWaitNs ? IdleCause::kGpuWait : IdleCause::kLaunchOverhead, g1 - g0);
    }
    const ThreadActivity* th = ix.thread(rc.pid[r], rc.tid[r]);
    const TimeNs late_end = std::min(launch, g1);
    Idle part{};
    add(part, IdleCause::kLaunchOverhead, g1 - late_end);  // the launch and its latency
    split_host_time(th, g0, late_end, part);
    if (th != nullptr) {
      // The GPU ran dry while the thread waited for it: everything the host then did
      // before the next launch would have overlapped GPU work without that wait.
      IdleCause drain = IdleCause::kHostWork;
      if (covers(th->sync, g0)) drain = IdleCause::kSync;
      else if (covers(th->allocator, g0)) drain = IdleCause::kAllocator;
      if (drain != IdleCause::kHostWork) {
        for (IdleCause c : {IdleCause::kLaunchOverhead, IdleCause::kHostWork}) {
          add(part, drain, part[static_cast<int>(c)]);
          part[static_cast<int>(c)] = 0;
        }
      }
    }
    for (int k = 0; k < kNumIdleCauses; ++k) idle[k] += part[k];
  }
};

bool is_transfer(CopyKind k) {
  return k == CopyKind::kHtoD || k == CopyKind::kDtoH || k == CopyKind::kHtoH || k == CopyKind::kPtoP;
}

// Per-device accumulation over the windows of one source.
struct DeviceWindow {
  TimeNs cur_end = 0;
  TimeNs busy = 0;
  std::array<TimeNs, kNumKernelClasses> class_sum{};
  TimeNs transfer_sum = 0;
  Idle idle{};
  int64_t ops = 0, gaps = 0;
  bool any = false;
};

// The windows device ops of source `src` fall in, in start order.
std::vector<size_t> windows_of_source(const StepWindows& windows, int32_t src) {
  const auto& ws = windows.steps;
  std::vector<size_t> wins;
  for (size_t k = 0; k < ws.size(); ++k) {
    if (ws[k].source == src || windows.whole_trace) wins.push_back(k);
  }
  std::sort(wins.begin(), wins.end(), [&](size_t a, size_t b) { return ws[a].start < ws[b].start; });
  return wins;
}

// One device's ops swept against its windows (`wins`, in start order): busy time, time
// per kernel class and the gaps' idle causes, per window.
class DeviceSweep {
 public:
  DeviceSweep(const Timeline& tl, const TimelineIndex& ix, const std::vector<StepWindow>& ws,
              const std::vector<size_t>& wins)
      : g_(tl.gpu_ops), ix_(ix), attr_{tl, ix}, ws_(ws), wins_(wins), acc_(wins.size()) {
    for (size_t k = 0; k < wins.size(); ++k) acc_[k].cur_end = ws[wins[k]].start;
  }

  // Keeps each gap (device `device`) in `out` besides summing it.
  void record(std::vector<IdleGap>* out, int32_t device) {
    record_ = out;
    device_ = device;
  }

  std::vector<DeviceWindow> run(const std::vector<uint32_t>& ops) {
    size_t j = 0;
    for (uint32_t op : ops) {
      const TimeNs s = g_.start[op], e = g_.end[op];
      while (j < wins_.size() && ws_[wins_[j]].end <= s) finish(j++, op);
      for (size_t k = j; k < wins_.size() && ws_[wins_[k]].start < e; ++k) add_op(k, op);
    }
    while (j < wins_.size()) finish(j++, -1);
    return std::move(acc_);
  }

 private:
  // Window k ends: the gap to its end, up to the next op `next` (-1: none).
  void finish(size_t k, int64_t next) {
    DeviceWindow& a = acc_[k];
    const StepWindow& w = ws_[wins_[k]];
    if (a.cur_end < w.end) {
      gap(k, a.cur_end, w.end, next);
      a.cur_end = w.end;
    }
  }

  // The gap [g0, g1) of window k before op `next` (-1: none), attributed and counted.
  void gap(size_t k, TimeNs g0, TimeNs g1, int64_t next) {
    DeviceWindow& a = acc_[k];
    ++a.gaps;
    if (record_ == nullptr) return attr_.gap(g0, g1, next, a.idle);
    Idle part{};
    attr_.gap(g0, g1, next, part);
    for (int c = 0; c < kNumIdleCauses; ++c) a.idle[c] += part[c];
    const auto top = std::max_element(part.begin(), part.end());
    if (*top <= 0) return;
    record_->push_back({g0, g1, device_, static_cast<int32_t>(wins_[k]), static_cast<IdleCause>(top - part.begin())});
  }

  // The part of `op` inside window k, and the gap before it.
  void add_op(size_t k, uint32_t op) {
    const StepWindow& w = ws_[wins_[k]];
    const TimeNs cs = std::max(g_.start[op], w.start), ce = std::min(g_.end[op], w.end);
    if (ce <= cs) return;
    DeviceWindow& a = acc_[k];
    a.any = true;
    ++a.ops;
    a.class_sum[static_cast<int>(ix_.kclass[op])] += ce - cs;
    if (is_transfer(g_.copy_kind[op])) a.transfer_sum += ce - cs;
    if (cs > a.cur_end) gap(k, a.cur_end, cs, op);
    if (ce > a.cur_end) {
      a.busy += ce - std::max(cs, a.cur_end);
      a.cur_end = ce;
    }
  }

  const timeline::GpuOps& g_;
  const TimelineIndex& ix_;
  Attributor attr_;
  const std::vector<StepWindow>& ws_;
  const std::vector<size_t>& wins_;
  std::vector<DeviceWindow> acc_;
  std::vector<IdleGap>* record_ = nullptr;
  int32_t device_ = -1;
};

// Adds one device's share of a window to the step's breakdown.
void add_device_window(const DeviceWindow& a, StepBreakdown& b) {
  b.busy += a.busy;
  for (int c = 0; c < kNumIdleCauses; ++c) b.idle[c] += a.idle[c];
  const TimeNs sum = std::accumulate(a.class_sum.begin(), a.class_sum.end(), TimeNs{0});
  // Concurrent streams overlap: share the busy union out in proportion to op time.
  const double scale = sum > 0 ? static_cast<double>(a.busy) / static_cast<double>(sum) : 0;
  for (int c = 0; c < kNumKernelClasses; ++c) {
    b.busy_by_class[c] += static_cast<TimeNs>(static_cast<double>(a.class_sum[c]) * scale);
  }
  b.transfer_busy += static_cast<TimeNs>(static_cast<double>(a.transfer_sum) * scale);
  b.gpu_ops += a.ops;
  b.gaps += a.gaps;
}

// Completes a step seen by `devices` devices: the average over them, the host's critical
// time, and sync idle the syncs merely exposed relabelled as host work.
void finish_step(const TimelineIndex& ix, const StepWindow& w, int devices, StepBreakdown& b) {
  b.duration = w.duration();
  const int n = devices;
  if (n > 1) {  // average over the devices of the step's process
    b.busy /= n;
    for (auto& v : b.idle) v /= n;
    for (auto& v : b.busy_by_class) v /= n;
    b.transfer_busy /= n;
  } else if (n == 0) {
    b.idle[static_cast<int>(IdleCause::kNothingQueued)] = b.duration;
  }
  const ThreadActivity* th = ix.thread(w.pid, w.tid);
  const TimeNs span = w.cpu_end - w.cpu_start;
  // Allocator calls block too (cudaFree waits for the device): not host work.
  b.host_critical = span -
                    (th ? th->sync.overlap(w.cpu_start, w.cpu_end) + th->allocator.overlap(w.cpu_start, w.cpu_end) : 0);
  // What-if: without the syncs the step would take max(host work, GPU work + other
  // idle). Sync idle beyond what that saves is host time the syncs merely exposed.
  const TimeNs sync_idle = b.idle_of(IdleCause::kSync);
  const TimeNs gpu_side = b.duration - sync_idle;
  const TimeNs exposed = std::clamp(b.host_critical - gpu_side, TimeNs{0}, sync_idle);
  if (exposed > 0) {
    b.idle[static_cast<int>(IdleCause::kSync)] -= exposed;
    b.idle[static_cast<int>(IdleCause::kHostWork)] += exposed;
    b.sync_relabelled = exposed;
  }
}

void add_to_total(const StepBreakdown& b, StepBreakdown& t) {
  t.duration += b.duration;
  t.busy += b.busy;
  for (int c = 0; c < kNumIdleCauses; ++c) t.idle[c] += b.idle[c];
  for (int c = 0; c < kNumKernelClasses; ++c) t.busy_by_class[c] += b.busy_by_class[c];
  t.transfer_busy += b.transfer_busy;
  t.host_critical += b.host_critical;
  t.sync_relabelled += b.sync_relabelled;
  t.gpu_ops += b.gpu_ops;
  t.gaps += b.gaps;
}

}  // namespace

const char* idle_cause_name(IdleCause c) {
  switch (c) {
    case IdleCause::kInput: return "input";
    case IdleCause::kSync: return "sync";
    case IdleCause::kAllocator: return "allocator";
    case IdleCause::kLaunchOverhead: return "launch_overhead";
    case IdleCause::kHostWork: return "host_work";
    case IdleCause::kGpuWait: return "gpu_wait";
    case IdleCause::kNothingQueued: return "nothing_queued";
    case IdleCause::kUnknown: return "unknown";
  }
  return "unknown";
}

TimeNs StepBreakdown::idle_total() const { return std::accumulate(idle.begin(), idle.end(), TimeNs{0}); }

Breakdown compute_breakdown(const Timeline& tl, const TimelineIndex& ix, const StepWindows& windows) {
  const auto& ws = windows.steps;
  Breakdown out;
  out.steps.resize(ws.size());
  std::vector<int> devices_seen(ws.size(), 0);

  for (size_t d = 0; d < ix.device_ops.size(); ++d) {
    const auto& ops = ix.device_ops[d];
    if (ops.empty()) continue;
    const int32_t src = d < tl.devices.size() ? tl.devices[d].source_index : 0;
    const std::vector<size_t> wins = windows_of_source(windows, src);
    const std::vector<DeviceWindow> acc = DeviceSweep(tl, ix, ws, wins).run(ops);
    for (size_t k = 0; k < wins.size(); ++k) {
      if (!acc[k].any) continue;
      ++devices_seen[wins[k]];
      add_device_window(acc[k], out.steps[wins[k]]);
    }
  }

  for (size_t k = 0; k < ws.size(); ++k) finish_step(ix, ws[k], devices_seen[k], out.steps[k]);
  for (const auto& b : out.steps) add_to_total(b, out.total);
  return out;
}

std::vector<IdleGap> idle_gaps(const Timeline& tl, const TimelineIndex& ix, const StepWindows& windows,
                               int64_t only_step) {
  std::vector<IdleGap> gaps;
  for (size_t d = 0; d < ix.device_ops.size(); ++d) {
    const auto& ops = ix.device_ops[d];
    if (ops.empty()) continue;
    const int32_t src = d < tl.devices.size() ? tl.devices[d].source_index : 0;
    std::vector<size_t> wins = windows_of_source(windows, src);
    if (only_step >= 0) {
      std::erase_if(wins, [&](size_t k) { return static_cast<int64_t>(k) != only_step; });
      if (wins.empty()) continue;
    }
    DeviceSweep sweep(tl, ix, windows.steps, wins);
    sweep.record(&gaps, static_cast<int32_t>(d));
    sweep.run(ops);
  }
  return gaps;
}

}  // namespace chokepoint::analyses
