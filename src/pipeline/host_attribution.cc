#include "pipeline/host_attribution.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analyses/intervals.h"

namespace chokepoint::pipeline {

namespace {

// The thread that launched the most GPU work, of those with Python stacks (autograd's
// backward thread launches much and runs no Python); none when none did.
std::optional<std::pair<int64_t, int64_t>> main_launch_thread(const timeline::Timeline& tl,
                                                              const samples::PyStacks& stacks) {
  std::map<std::pair<int64_t, int64_t>, int64_t> launches;
  const auto& rc = tl.runtime_calls;
  for (size_t i = 0; i < rc.size(); ++i) {
    if (rc.correlation[i] >= 0) ++launches[{rc.pid[i], rc.tid[i]}];
  }
  std::pair<int64_t, int64_t> best{-1, -1};
  int64_t most = 0;
  for (const auto& [thread, n] : launches) {
    const std::pair<int64_t, int64_t> th = thread;  // a copy: clang before 16 cannot capture a structured binding
    const bool has_stacks = std::any_of(stacks.threads.begin(), stacks.threads.end(), [&](const samples::PyThread& t) {
      return t.pid == th.first && t.tid == th.second;
    });
    if (has_stacks && n > most) {
      most = n;
      best = th;
    }
  }
  if (most > 0) return best;
  return std::nullopt;
}

// The trace: the GPU's busy union, its gaps inside the analyzed steps are idle. False
// when the GPU ran nothing.
bool idle_from_trace(const timeline::Timeline& tl, const analyses::Analysis& a, const samples::PyStacks& stacks,
                     analyses::AttributionInput& in) {
  analyses::Intervals busy;
  for (size_t i = 0; i < tl.gpu_ops.size(); ++i) busy.add(tl.gpu_ops.start[i], tl.gpu_ops.end[i]);
  busy.build();
  if (busy.empty()) return false;
  int64_t wa = busy.merged().front().first, wb = busy.merged().back().second;
  if (!a.windows.steps.empty() && !a.windows.whole_trace) {
    wa = a.windows.steps.front().start;
    wb = a.windows.steps.back().end;
  }
  in.window_start_ns = wa;
  in.window_end_ns = wb;
  int64_t prev = wa;
  busy.for_each_in(wa, wb, [&](int64_t s, int64_t e) {
    if (s > prev) in.idle.push_back({prev, s, 1.0});
    prev = std::max(prev, e);
  });
  if (wb > prev) in.idle.push_back({prev, wb, 1.0});
  if (const auto best = main_launch_thread(tl, stacks)) in.launch_threads.push_back(*best);
  in.method = "trace";
  return true;
}

// Sampled utilization of the judged GPU, over its active window. False without one.
bool idle_from_samples(const samples::Recording& rec, const analyses::sampled::LiveAnalysis& la,
                       analyses::AttributionInput& in) {
  const auto gpus = la.judged_gpus();
  if (gpus.empty() || gpus.front()->active_start_ns < 0) return false;
  const auto* g = gpus.front();
  const samples::Series* s = analyses::sampled::activity_series(rec.samples, g->index);
  if (s == nullptr) return false;
  in.window_start_ns = g->active_start_ns;
  in.window_end_ns = g->active_end_ns;
  const auto& t = s->time_ns;
  const auto& v = s->values;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!s->valid[i] || !std::isfinite(v[i])) continue;
    const double idle = std::clamp(1.0 - v[i] / 100.0, 0.0, 1.0);
    // A reading covers the interval before it (NVML averages over its sample period).
    if (i > 0 && idle > 0) in.idle.push_back({t[i - 1], t[i], idle});
  }
  in.method = "sampled utilization";
  return true;
}

}  // namespace

std::optional<analyses::HostAttribution> attribute_host(const samples::PyStacks& stacks, const samples::Recording* rec,
                                                        const analyses::sampled::LiveAnalysis* la,
                                                        const timeline::Timeline* tl, const analyses::Analysis* a) {
  if (stacks.empty()) return std::nullopt;
  analyses::AttributionInput in;
  in.stacks = &stacks;
  if (la != nullptr) {
    for (const auto& p : la->processes) {
      if (p.meta.role == samples::ProcessRole::kDataLoaderWorker) in.exclude_pids.push_back(p.meta.pid);
    }
  }
  if (tl != nullptr && a != nullptr && tl->gpu_ops.size() > 0) {
    if (!idle_from_trace(*tl, *a, stacks, in)) return std::nullopt;
  } else if (rec != nullptr && la != nullptr) {
    if (!idle_from_samples(*rec, *la, in)) {
      // No GPU work to wait (no GPU metrics, or a CPU-only run or phase): the stacks still
      // say where the host's time went, over the whole recording (issue 42).
      if (la->end_ns <= la->start_ns) return std::nullopt;
      in.window_start_ns = la->start_ns;
      in.window_end_ns = la->end_ns;
      in.method = std::string(analyses::kNoGpuWork);
    }
  } else {
    return std::nullopt;
  }
  return analyses::attribute_host_time(in);
}

}  // namespace chokepoint::pipeline
