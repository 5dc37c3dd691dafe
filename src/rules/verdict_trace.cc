// The verdict of a trace: the bottleneck category that costs the most step time (idle
// time by cause, busy time by kernel class with matrix work below the ridge point counted
// as memory), taken among the idle causes when the GPU is idle most of the step and among
// the busy classes otherwise (the TensorBoard plugin's "GPU utilization below 50%" test:
// a serialized host+GPU pipeline reads "sync", not "compute", even when its sync cost and
// its compute time are close). Without GPU work, or when the top cause is idle time
// nothing in the trace explains, the verdict is unknown with the reason.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "rules/verdict.h"

namespace chokepoint::rules {

using analyses::IdleCause;
using analyses::KernelClass;

namespace {

// A trace cut off mid-file: its last steps may be missing or partial.
constexpr double kTruncatedFactor = 0.8;

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
  return c == Category::kInput || c == Category::kHost || c == Category::kSync || c == Category::kIdle ||
         c == Category::kUnknown;
}

bool truncated(const TraceEvidence& t) {
  if (t.stats == nullptr) return false;
  for (const StatId id : {StatId::kKinetoTruncated, StatId::kCuptiTruncated, StatId::kCuptiGzipTruncated}) {
    if (t.stats->count(id) > 0) return true;
  }
  return false;
}

}  // namespace

bool host_side(Category c) {
  return c == Category::kInput || c == Category::kHost || c == Category::kIo || c == Category::kSync ||
         c == Category::kTransfer;
}

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
  // Matrix kernels below the ridge point (a decode GEMV streaming its weights) wait on
  // memory, not arithmetic. busy_by_class shares out overlapping streams, so move at most
  // what compute holds, scaled the same way.
  const TimeNs kernel_ns = a.kernels.kernel_ns;
  if (a.roofline.matrix_memory_bound_ns > 0 && kernel_ns > 0) {
    const double scale = static_cast<double>(t.busy) / static_cast<double>(std::max(kernel_ns, t.busy));
    const TimeNs moved = std::min(ns[static_cast<size_t>(Category::kCompute)],
                                  static_cast<TimeNs>(static_cast<double>(a.roofline.matrix_memory_bound_ns) * scale));
    ns[static_cast<size_t>(Category::kCompute)] -= moved;
    ns[static_cast<size_t>(Category::kMemory)] += moved;
  }
  std::vector<CategoryCost> out;
  for (size_t c = 0; c < ns.size(); ++c) {
    if (ns[c] > 0) out.push_back({static_cast<Category>(c), ns[c], a.pct(ns[c])});
  }
  std::sort(out.begin(), out.end(), [](const CategoryCost& x, const CategoryCost& y) { return x.ns > y.ns; });
  return out;
}

Verdict trace_verdict(const TraceEvidence& t) {
  const analyses::Analysis& a = t.a;
  Verdict v;
  v.costs = category_costs(a);
  const auto& tot = a.total();
  const double step_ms = a.ms_per_step(tot.duration);
  if (t.tl.gpu_ops.size() == 0) {
    v.unknown_reason = "the input holds no GPU work (a CPU-only trace, or a profiler without CUDA activity)";
    v.lead = "No GPU work was recorded";
    return v;
  }
  if (tot.duration <= 0 || v.costs.empty()) {
    v.unknown_reason = "no analyzable window: the steps hold no time";
    v.lead = "Nothing ran in the analyzed window";
    return v;
  }
  const bool idle_majority = tot.idle_total() > tot.busy;
  auto top = std::find_if(v.costs.begin(), v.costs.end(),
                          [&](const CategoryCost& c) { return from_idle(c.category) == idle_majority; });
  if (top == v.costs.end()) top = v.costs.begin();
  std::rotate(v.costs.begin(), top, top + 1);  // the verdict's category first
  v.bound = v.costs.front().category;
  const double first = static_cast<double>(v.costs.front().ns);
  double second = 0;
  for (size_t i = 1; i < v.costs.size(); ++i) second = std::max(second, static_cast<double>(v.costs[i].ns));
  v.confidence = first / (first + second);
  if (truncated(t)) v.confidence *= kTruncatedFactor;
  const double pct = v.costs.front().pct;
  switch (v.bound) {
    case Category::kInput:
      v.lead = fmt::format("The GPU waits for input data {:.0f}% of each {:.2f} ms step", pct, step_ms);
      break;
    case Category::kHost:
      v.lead = fmt::format(
          "The CPU cannot feed the GPU: it is idle {:.0f}% of each {:.2f} ms step waiting for host work and launches",
          pct, step_ms);
      break;
    case Category::kSync:
      v.lead = fmt::format("Host-device synchronizations leave the GPU idle {:.0f}% of each {:.2f} ms step", pct,
                           step_ms);
      break;
    case Category::kTransfer:
      v.lead = fmt::format("Host<->device copies take {:.0f}% of each {:.2f} ms step", pct, step_ms);
      break;
    case Category::kCompute:
      v.lead = fmt::format("The GPU is busy computing {:.0f}% of each {:.2f} ms step", pct, step_ms);
      break;
    case Category::kMemory:
      v.lead = fmt::format("Memory-bound kernels take {:.0f}% of each {:.2f} ms step", pct, step_ms);
      break;
    case Category::kCommunication:
      v.lead = fmt::format("Collectives take {:.0f}% of each {:.2f} ms step", pct, step_ms);
      break;
    case Category::kIdle:
    case Category::kUnknown:
    case Category::kIo:
      // Idle time nothing in the trace explains (no op queued, no launch recorded): the
      // trace cannot say what held the GPU back.
      v.unknown_reason = fmt::format(
          "the GPU is idle {:.0f}% of each {:.2f} ms step with nothing queued and nothing on the traced host "
          "explaining it (another process, an unrecorded thread, or time outside the profiled steps)",
          pct, step_ms);
      v.lead = fmt::format("The GPU is idle {:.0f}% of each {:.2f} ms step for reasons the trace does not show", pct,
                           step_ms);
      v.bound = Category::kUnknown;
      break;
  }
  return v;
}

}  // namespace chokepoint::rules
