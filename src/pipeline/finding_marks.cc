#include "pipeline/finding_marks.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace chokepoint::pipeline {
namespace {

using analyses::IdleCause;
using analyses::KernelClass;
using rules::Category;
using timeline::TimeNs;

// What a finding points at in the timeline: idle causes or kernel classes.
struct Target {
  std::vector<IdleCause> causes;
  std::vector<KernelClass> classes;
};

// Findings whose category alone would point at too much (rules/ and the glossary say
// what each id means).
struct Override {
  std::string_view id;
  Target target;
};

Target target_of(const rules::Finding& f) {
  static const Override kById[] = {
      {"launch-overhead", {{IdleCause::kLaunchOverhead}, {}}},
      {"host-work", {{IdleCause::kHostWork}, {}}},
      {"allocator-churn", {{IdleCause::kAllocator}, {}}},
      {"memory-bound-matmul", {{}, {KernelClass::kGemm}}},
      {"no-tensor-cores", {{}, {KernelClass::kGemm, KernelClass::kConv}}},
  };
  for (const Override& o : kById) {
    if (f.id == o.id) return o.target;
  }
  switch (f.category) {
    case Category::kInput: return {{IdleCause::kInput}, {}};
    case Category::kSync: return {{IdleCause::kSync}, {}};
    case Category::kHost: return {{IdleCause::kLaunchOverhead, IdleCause::kHostWork, IdleCause::kAllocator}, {}};
    case Category::kCompute: return {{}, {KernelClass::kGemm, KernelClass::kConv, KernelClass::kAttention}};
    case Category::kMemory:
      return {{}, {KernelClass::kElementwise, KernelClass::kReduction, KernelClass::kNormalization}};
    case Category::kTransfer: return {{}, {KernelClass::kCopy}};
    case Category::kCommunication: return {{}, {KernelClass::kCommunication}};
    default: return {};
  }
}

struct Instance {
  TimeNs start = 0, len = 0;
  int32_t device = 0;
  std::string what;
};

// The longest matching gap or op of each step (index into the step windows).
std::vector<Instance> worst_per_step(const timeline::Timeline& tl, const analyses::Analysis& a, const Target& t,
                                     const std::vector<analyses::IdleGap>& gaps) {
  std::vector<Instance> best(a.windows.steps.size());
  auto offer = [&](int64_t step, TimeNs s, TimeNs e, int32_t device, const std::string& what) {
    if (step < 0 || static_cast<size_t>(step) >= best.size() || e - s <= best[step].len) return;
    best[step] = {s, e - s, device, what};
  };
  for (const analyses::IdleGap& g : gaps) {
    if (std::find(t.causes.begin(), t.causes.end(), g.cause) == t.causes.end()) continue;
    std::string what = "longest ";
    what += analyses::idle_cause_name(g.cause);
    offer(g.step, g.start, g.end, g.device, what + " gap of the step");
  }
  if (!t.classes.empty()) {
    const auto& ops = tl.gpu_ops;
    for (size_t op = 0; op < ops.size(); ++op) {
      if (std::find(t.classes.begin(), t.classes.end(), a.index.kclass[op]) == t.classes.end()) continue;
      const int32_t step = op < a.membership.gpu_op.size() ? a.membership.gpu_op[op] : -1;
      std::string what = "longest ";
      what += analyses::kernel_class_name(a.index.kclass[op]);
      what += " op of the step: ";
      what += tl.strings.view(ops.name[op]).substr(0, 120);
      offer(step, ops.start[op], ops.end[op], ops.device[op], what);
    }
  }
  return best;
}

}  // namespace

std::vector<exporters::ChromeMarker> finding_markers(const timeline::Timeline& tl, const analyses::Analysis& a,
                                                     const std::vector<rules::Finding>& findings,
                                                     const std::vector<analyses::IdleGap>& gaps) {
  std::vector<exporters::ChromeMarker> out;
  const auto& ws = a.windows.steps;
  for (const rules::Finding& f : findings) {
    const Target t = target_of(f);
    const std::string severity(severity_name(f.severity));
    size_t placed = 0;
    if (!t.causes.empty() || !t.classes.empty()) {
      const std::vector<Instance> best = worst_per_step(tl, a, t, gaps);
      for (size_t k = 0; k < best.size(); ++k) {
        if (best[k].len <= 0) continue;
        std::string what = fmt::format("step {}: {}", ws[k].number, best[k].what);
        out.push_back({best[k].start, best[k].len, best[k].device, f.id, f.title, severity, std::move(what)});
        ++placed;
      }
    }
    if (placed == 0 && !ws.empty()) {  // nothing to point at: the finding is about the whole run
      const int32_t device = std::max(0, a.primary_device);
      out.push_back({ws.front().start, 0, device, f.id, f.title, severity, "the whole run (no single event)"});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.ts < y.ts; });
  return out;
}

}  // namespace chokepoint::pipeline
