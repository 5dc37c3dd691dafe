#include "rules/diagnose.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace chokepoint::rules {

using analyses::IdleCause;
using analyses::KernelClass;

namespace {

Category idle_category(IdleCause c) {
  switch (c) {
    case IdleCause::kInput: return Category::kInput;
    case IdleCause::kSync: return Category::kSync;
    case IdleCause::kAllocator:
    case IdleCause::kLaunchOverhead:
    case IdleCause::kHostWork: return Category::kHost;
    case IdleCause::kGpuWait:
    case IdleCause::kNothingQueued: return Category::kIdle;
    case IdleCause::kUnknown: return Category::kUnknown;
  }
  return Category::kUnknown;
}

Category busy_category(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
    case KernelClass::kConv:
    case KernelClass::kAttention:
    case KernelClass::kOther: return Category::kCompute;
    case KernelClass::kElementwise:
    case KernelClass::kReduction:
    case KernelClass::kNormalization:
    case KernelClass::kCopy: return Category::kMemory;
    case KernelClass::kCommunication: return Category::kCommunication;
  }
  return Category::kCompute;
}

// Categories that name why the GPU was idle (the others name what kept it busy).
bool from_idle(Category c) {
  return c == Category::kInput || c == Category::kHost || c == Category::kSync ||
         c == Category::kIdle || c == Category::kUnknown;
}

double saved_ns(const Finding& f, TimeNs total) {
  if (!f.estimated_speedup || *f.estimated_speedup <= 0) return 0;
  return static_cast<double>(total) * (1.0 - 1.0 / *f.estimated_speedup);
}

// One sentence a person reads first.
std::string summarize(const analyses::Analysis& a, const std::vector<CategoryCost>& costs,
                      const std::vector<Finding>& findings) {
  const auto& t = a.total();
  const double step_ms = a.ms_per_step(t.duration);
  if (costs.empty() || t.duration == 0) return "Nothing ran in the analyzed window.";
  const CategoryCost& top = costs.front();
  std::string lead;
  switch (top.category) {
    case Category::kInput: lead = fmt::format("The GPU waits for input data {:.0f}% of each {:.2f} ms step", top.pct, step_ms); break;
    case Category::kHost: lead = fmt::format("The CPU cannot feed the GPU: it is idle {:.0f}% of each {:.2f} ms step waiting for host work and launches", top.pct, step_ms); break;
    case Category::kSync: lead = fmt::format("Host-device synchronizations leave the GPU idle {:.0f}% of each {:.2f} ms step", top.pct, step_ms); break;
    case Category::kTransfer: lead = fmt::format("Host<->device copies take {:.0f}% of each {:.2f} ms step", top.pct, step_ms); break;
    case Category::kCompute: lead = fmt::format("The GPU is busy computing {:.0f}% of each {:.2f} ms step", top.pct, step_ms); break;
    case Category::kMemory: lead = fmt::format("Memory-bound kernels take {:.0f}% of each {:.2f} ms step", top.pct, step_ms); break;
    case Category::kCommunication: lead = fmt::format("Collectives take {:.0f}% of each {:.2f} ms step", top.pct, step_ms); break;
    default: lead = fmt::format("The GPU is idle {:.0f}% of each {:.2f} ms step with no work queued", top.pct, step_ms); break;
  }
  const Finding* best = nullptr;
  for (const auto& f : findings) {
    if (f.category == top.category) {
      best = &f;
      break;
    }
  }
  if (best == nullptr && !findings.empty() && findings.front().severity != Severity::kInfo) best = &findings.front();
  if (best != nullptr && best->estimated_speedup) {
    return fmt::format("{}; fixing {} should give about {:.2f}x.", lead, best->id, *best->estimated_speedup);
  }
  if (top.category == Category::kCompute) return lead + "; no bottleneck outside the kernels themselves was found.";
  return lead + ".";
}

}  // namespace

std::vector<CategoryCost> category_costs(const analyses::Analysis& a) {
  const auto& t = a.total();
  std::array<TimeNs, 10> ns{};
  auto add = [&](Category c, TimeNs v) { ns[static_cast<size_t>(c)] += v; };
  for (int c = 0; c < analyses::kNumIdleCauses; ++c) add(idle_category(static_cast<IdleCause>(c)), t.idle[c]);
  for (int c = 0; c < analyses::kNumKernelClasses; ++c) {
    const auto kc = static_cast<KernelClass>(c);
    TimeNs v = t.busy_by_class[c];
    if (kc == KernelClass::kCopy) {  // host<->device copies are transfer, the rest memory
      add(Category::kTransfer, t.transfer_busy);
      v -= t.transfer_busy;
    }
    add(busy_category(kc), v);
  }
  std::vector<CategoryCost> out;
  for (size_t c = 0; c < ns.size(); ++c) {
    if (ns[c] > 0) out.push_back({static_cast<Category>(c), ns[c], a.pct(ns[c])});
  }
  std::sort(out.begin(), out.end(), [](const CategoryCost& x, const CategoryCost& y) { return x.ns > y.ns; });
  return out;
}

Diagnosis diagnose(const timeline::Timeline& tl, const analyses::Analysis& a) {
  Diagnosis d;
  RuleContext ctx{tl, a};
  if (a.total().duration > 0) {
    for (const auto& r : all_rules()) {
      if (r.evaluate == nullptr) continue;
      if (auto f = r.evaluate(ctx)) d.findings.push_back(std::move(*f));
    }
  }
  const TimeNs total = a.total().duration;
  std::stable_sort(d.findings.begin(), d.findings.end(), [&](const Finding& x, const Finding& y) {
    const double sx = saved_ns(x, total), sy = saved_ns(y, total);
    if (sx != sy) return sx > sy;
    return x.time_share_pct > y.time_share_pct;
  });
  d.costs = category_costs(a);
  // The GPU's own work is the bottleneck only when the GPU is busy most of the step;
  // otherwise the largest reason it sits idle is (the TensorBoard plugin's "GPU
  // utilization below 50%" test). A serialized host+GPU pipeline thus reads "sync", not
  // "compute", even when its sync cost and its compute time are close.
  const bool idle_majority = a.total().idle_total() > a.total().busy;
  auto top = std::find_if(d.costs.begin(), d.costs.end(),
                          [&](const CategoryCost& c) { return from_idle(c.category) == idle_majority; });
  if (top != d.costs.end()) {
    std::rotate(d.costs.begin(), top, top + 1);  // the verdict's category first
    d.bound = d.costs.front().category;
    const double first = static_cast<double>(d.costs.front().ns);
    double second = 0;
    for (size_t i = 1; i < d.costs.size(); ++i) second = std::max(second, static_cast<double>(d.costs[i].ns));
    d.confidence = first / (first + second);
  }
  d.summary = summarize(a, d.costs, d.findings);
  return d;
}

}  // namespace chokepoint::rules
