#include "pipeline/step_views.h"

#include <algorithm>
#include <map>
#include <string>

#include "analyses/idle_gaps.h"

namespace chokepoint::pipeline {
namespace {

using analyses::IdleCause;
using analyses::KernelClass;
using timeline::TimeNs;

// A strip is drawn 1000 units wide: spans of one kind closer than half a unit are one.
constexpr double kMergeFraction = 1.0 / 2000;
// Kernel names on the strip are tooltips: the start of the name is enough.
constexpr size_t kMaxLabel = 160;

double ms(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

std::vector<report::Share> step_parts(const analyses::StepBreakdown& b) {
  std::vector<report::Share> parts;
  const double dur = static_cast<double>(std::max<TimeNs>(1, b.duration));
  for (int c = 0; c < analyses::kNumKernelClasses; ++c) {
    const TimeNs v = b.busy_by_class[c];
    if (v > 0) parts.push_back({analyses::kernel_class_name(static_cast<KernelClass>(c)), 100.0 * v / dur, ms(v)});
  }
  for (int c = 0; c < analyses::kNumIdleCauses; ++c) {
    const TimeNs v = b.idle[c];
    if (v <= 0) continue;
    std::string name = "idle:";
    name += analyses::idle_cause_name(static_cast<IdleCause>(c));
    parts.push_back({name, 100.0 * v / dur, ms(v)});
  }
  return parts;
}

// Spans of each kind in time order, neighbours closer than `tol` ms merged; kinds in the
// order they first appear (the order they are drawn in).
std::vector<report::StripSpan> merged(std::vector<report::StripSpan> spans, double tol) {
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<report::StripSpan>> by_kind;
  for (auto& s : spans) {
    if (by_kind.find(s.kind) == by_kind.end()) kinds.push_back(s.kind);
    by_kind[s.kind].push_back(std::move(s));
  }
  std::vector<report::StripSpan> out;
  for (const std::string& k : kinds) {
    auto& v = by_kind[k];
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.start_ms < y.start_ms; });
    const size_t first = out.size();
    for (auto& s : v) {
      if (out.size() > first && s.start_ms - out.back().end_ms < tol) {
        out.back().end_ms = std::max(out.back().end_ms, s.end_ms);
      } else {
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

report::StripLane thread_lane(const analyses::Analysis& a, const analyses::StepWindow& w) {
  report::StripLane lane{"CPU thread " + std::to_string(w.tid) + " (launches)", {}};
  const analyses::ThreadActivity* th = a.index.thread(w.pid, w.tid);
  if (th == nullptr) return lane;
  // Painter's order: the outer ATen ops first, what they wait in on top.
  const std::pair<const analyses::Intervals*, const char*> sets[] = {{&th->op, "aten_op"},
                                                                     {&th->api, "cuda_api"},
                                                                     {&th->allocator, "allocator"},
                                                                     {&th->sync, "sync"},
                                                                     {&th->dataloader, "dataloader"}};
  for (const auto& entry : sets) {
    const char* kind = entry.second;  // named: clang does not capture structured bindings
    entry.first->for_each_in(w.start, w.end, [&](TimeNs x, TimeNs y) {
      lane.spans.push_back({ms(x - w.start), ms(y - w.start), kind, ""});
    });
  }
  return lane;
}

// One lane per stream of the devices that ran the step.
std::vector<report::StripLane> stream_lanes(const timeline::Timeline& tl, const analyses::Analysis& a,
                                            const analyses::StepWindow& w) {
  std::map<std::pair<size_t, int32_t>, report::StripLane> lanes;
  const auto& g = tl.gpu_ops;
  for (size_t d = 0; d < a.index.device_ops.size(); ++d) {
    if (!a.windows.whole_trace && d < tl.devices.size() && tl.devices[d].source_index != w.source) continue;
    for (uint32_t op : a.index.device_ops[d]) {
      if (g.start[op] >= w.end) break;
      if (g.end[op] <= w.start) continue;
      auto& lane = lanes[{d, g.stream[op]}];
      if (lane.name.empty()) lane.name = "GPU " + std::to_string(d) + " stream " + std::to_string(g.stream[op]);
      std::string label(tl.strings.view(g.name[op]).substr(0, kMaxLabel));
      lane.spans.push_back({ms(std::max(g.start[op], w.start) - w.start), ms(std::min(g.end[op], w.end) - w.start),
                            analyses::kernel_class_name(a.index.kclass[op]), std::move(label)});
    }
  }
  std::vector<report::StripLane> out;
  for (auto& [key, lane] : lanes) out.push_back(std::move(lane));
  return out;
}

std::vector<report::StripLane> idle_lanes(const timeline::Timeline& tl, const analyses::Analysis& a, size_t k) {
  std::map<int32_t, report::StripLane> lanes;
  const analyses::StepWindow& w = a.windows.steps[k];
  for (const analyses::IdleGap& gap : analyses::idle_gaps(tl, a.index, a.windows, static_cast<int64_t>(k))) {
    auto& lane = lanes[gap.device];
    if (lane.name.empty()) lane.name = "GPU " + std::to_string(gap.device) + " idle";
    std::string kind = "idle:";
    kind += analyses::idle_cause_name(gap.cause);
    lane.spans.push_back({ms(gap.start - w.start), ms(gap.end - w.start), std::move(kind), ""});
  }
  std::vector<report::StripLane> out;
  for (auto& [d, lane] : lanes) out.push_back(std::move(lane));
  return out;
}

}  // namespace

void add_step_views(report::Report& r, const timeline::Timeline& tl, const analyses::Analysis& a) {
  if (a.steps() <= 0 || a.windows.whole_trace) return;
  for (const auto& b : a.breakdown.steps) r.window.step_parts.push_back(step_parts(b));
  std::vector<size_t> order(a.windows.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto& ws = a.windows.steps;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return ws[x].duration() < ws[y].duration(); });
  const size_t k = order[order.size() / 2];
  report::StepStrip strip;
  strip.step_number = ws[k].number;
  strip.duration_ms = ms(ws[k].duration());
  const double tol = strip.duration_ms * kMergeFraction;
  strip.lanes.push_back(thread_lane(a, ws[k]));
  for (auto& lane : stream_lanes(tl, a, ws[k])) strip.lanes.push_back(std::move(lane));
  for (auto& lane : idle_lanes(tl, a, k)) strip.lanes.push_back(std::move(lane));
  for (auto& lane : strip.lanes) lane.spans = merged(std::move(lane.spans), tol);
  r.median_step = std::move(strip);
}

}  // namespace chokepoint::pipeline
