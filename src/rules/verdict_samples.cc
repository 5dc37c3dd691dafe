// The verdict of live samples alone (diagnose() calls it when there is no trace). The
// findings of the sample evaluators are ranked by the saving they promise. A GPU busy less
// than half of its active window is starved: the top host-side finding (input, host, io,
// sync, or transfer paced by the CPU) takes the idle time it explains, and is the verdict
// (else idle, or unknown without process data). A busy GPU is bound by transfers when PCIe
// is saturated, by memory when GPM DRAM activity is high, else by compute; host-side
// findings without an estimate of their own are then context. Without GPU metrics, or
// when the workload never used a GPU, the host findings alone decide, at low confidence.
// Costs are shares of the active window.
#include <algorithm>

#include <fmt/format.h>

#include "rules/sampled/live_util.h"
#include "rules/verdict.h"

namespace chokepoint::rules {
namespace {
using analyses::sampled::GpuLive;
using analyses::sampled::LiveAnalysis;
// diagnose()'s line: the GPU's own work is the bottleneck only when it is busy most of the time.
constexpr double kBusyMajorityPct = 50.0;
// GPM DRAM activity of 60%: kernels spend most of their time moving bytes (DCGM's guide
// calls DRAM activity above ~50-60% memory-bandwidth heavy).
constexpr double kDramHeavyPct = 60.0;
// Samples every 100 ms cannot attribute each idle gap as a trace does: the verdict's
// share-based confidence is scaled down, further for a busy GPU without GPM (utilization
// cannot tell compute from memory) and without GPU metrics at all.
constexpr double kSampleConfidence = 0.7, kNoGpmFactor = 0.7, kHostOnlyConfidence = 0.4;
// GPUs judged without a PID match (meta.gpu_note: a container whose PIDs the driver does not
// share): their load may be another job's as well as the command's, so the verdict that
// rests on it is less sure (issue 13).
constexpr double kNoPidMatchFactor = 0.6;

double saving(const Finding& f) {
  return f.estimated_speedup && *f.estimated_speedup > 0 ? 1.0 - 1.0 / *f.estimated_speedup : 0.0;
}

// Mean of a statistic over the judged GPUs that have it.
template <typename F>
std::optional<double> mean_over(const std::vector<const GpuLive*>& gpus, F get) {
  double sum = 0;
  int n = 0;
  for (const GpuLive* g : gpus) {
    if (const std::optional<double> v = get(*g)) sum += *v, ++n;
  }
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

void add_cost(std::vector<CategoryCost>& costs, Category c, double pct, double window_ns) {
  if (pct <= 0) return;
  for (auto& x : costs) {
    if (x.category == c) {
      x.pct += pct;
      x.ns = static_cast<TimeNs>(x.pct / 100 * window_ns);
      return;
    }
  }
  costs.push_back({c, static_cast<TimeNs>(pct / 100 * window_ns), pct});
}

// Findings ranked by the saving they promise, then by the share of time they hold.
void rank_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& x, const Finding& y) {
    if (saving(x) != saving(y)) return saving(x) > saving(y);
    return x.time_share_pct > y.time_share_pct;
  });
}

// A finding whose rule says a busy GPU is then bound by transfers (Rule::saturates_the_link).
bool saturates_the_link(const Finding& f) {
  const Rule* r = find_rule(f.id);
  return r != nullptr && r->saturates_the_link;
}

template <typename Pred>
const Finding* first_of(const std::vector<Finding>& findings, Pred pred) {
  const auto it = std::find_if(findings.begin(), findings.end(), pred);
  return it == findings.end() ? nullptr : &*it;
}

const Finding* find_host_top(const std::vector<Finding>& findings) {
  return first_of(findings, [](const Finding& f) { return host_side(f.category) && !saturates_the_link(f); });
}

// No GPU metrics, or no GPU the workload used: the host findings alone decide.
Verdict host_only_verdict(const LiveAnalysis& la, const Finding* host_top) {
  Verdict d;
  d.bound = host_top ? host_top->category : Category::kUnknown;
  if (!host_top) {
    d.unknown_reason = !la.gpu_metrics ? "no GPU metrics and nothing on the host stands out"
                                       : "the workload did not use a GPU and nothing on the host stands out";
  }
  if (host_top) add_cost(d.costs, host_top->category, host_top->time_share_pct, la.duration_s * 1e9);
  d.confidence = host_top ? kHostOnlyConfidence : 0;
  // Either no GPU could be read, or the workload never showed up on one.
  const std::string why = !la.gpu_metrics
                              ? fmt::format("GPU metrics were unavailable ({})",
                                            la.gpu_unavailable.empty() ? "no reason recorded" : la.gpu_unavailable)
                              : std::string("The workload did not use a GPU (none of its processes appeared on one)");
  if (host_top) d.lead_finding = host_top->id;
  d.lead = fmt::format("{}; {}", why,
                       host_top ? fmt::format("from the host alone: {}", host_top->title)
                                : fmt::format("nothing on the host stands out over the {:.1f} s run (the tree "
                                              "used {:.0f}% of one core)",
                                              la.duration_s, la.tree_cpu_pct_mean));
  return d;
}

// A host-side problem does not limit a GPU that is busy most of the time: without an
// estimate of its own, such a finding is context (info), and says why.
void demote_host_findings(std::vector<Finding>& findings, double busy) {
  for (Finding& f : findings) {
    if (!host_side(f.category) || f.estimated_speedup || f.severity == Severity::kInfo || f.before_gpu_work) continue;
    f.severity = Severity::kInfo;
    f.detail += fmt::format(
        " The GPU was busy {:.0f}% of its active window meanwhile, so this does not limit "
        "the run now; it will once the GPU work gets faster.",
        busy);
  }
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& x, const Finding& y) {
    return (x.severity != Severity::kInfo) > (y.severity != Severity::kInfo);
  });
}

// What the judged GPUs did, averaged over them.
struct GpuActivity {
  double busy = 0;
  std::optional<double> sm, tensor, dram;
  double window_s = 0, window_ns = 0;
  std::string who, lead;
};

GpuActivity gpu_activity(const std::vector<const GpuLive*>& gpus, const LiveAnalysis& la, double busy) {
  GpuActivity a;
  a.busy = busy;
  const auto stat_mean = [](const std::optional<analyses::sampled::Stat>& s) {
    return s ? std::optional<double>(s->mean) : std::nullopt;
  };
  a.sm = mean_over(gpus, [&](const GpuLive& g) { return stat_mean(g.sm_active); });
  a.tensor = mean_over(gpus, [&](const GpuLive& g) { return stat_mean(g.tensor_active); });
  a.dram = mean_over(gpus, [&](const GpuLive& g) { return stat_mean(g.dram_active); });
  for (const GpuLive* g : gpus) a.window_s = std::max(a.window_s, g->active_s());
  a.window_ns = (a.window_s > 0 ? a.window_s : la.duration_s) * 1e9;
  a.who = gpus.size() == 1 ? sampled::gpu_label(*gpus[0]) : fmt::format("The {} GPUs", gpus.size());
  a.lead = fmt::format("{} {} busy {:.0f}% of {} {:.1f} s active window", a.who, gpus.size() == 1 ? "was" : "were",
                       busy, gpus.size() == 1 ? "its" : "their", a.window_s);
  return a;
}

// The bound and the costs: idle time is credited to the top host-side finding up to the
// share of time it held; the costs are sorted bound first and give the confidence.
void gpu_costs(Verdict& d, const GpuActivity& a, Category busy_cat, const Finding* host_top, bool starved,
               const LiveAnalysis& la) {
  const double busy = a.busy, window_ns = a.window_ns;
  const double idle = 100 - busy;
  const double explained = host_top ? std::min(idle, host_top->time_share_pct) : 0;
  if (starved) {
    d.bound = host_top ? host_top->category : la.processes.empty() ? Category::kUnknown : Category::kIdle;
    if (host_top) add_cost(d.costs, host_top->category, explained, window_ns);
    add_cost(d.costs, host_top || !la.processes.empty() ? Category::kIdle : Category::kUnknown, idle - explained,
             window_ns);
    add_cost(d.costs, busy_cat, busy, window_ns);
  } else {
    d.bound = busy_cat;
    add_cost(d.costs, busy_cat, busy, window_ns);
    if (host_top) add_cost(d.costs, host_top->category, explained, window_ns);
    add_cost(d.costs, Category::kIdle, idle - explained, window_ns);
  }
  std::sort(d.costs.begin(), d.costs.end(), [&](const CategoryCost& x, const CategoryCost& y) {
    if ((x.category == d.bound) != (y.category == d.bound)) return x.category == d.bound;
    return x.pct > y.pct;
  });
  if (!d.costs.empty()) {
    double second = 0;
    for (size_t i = 1; i < d.costs.size(); ++i) second = std::max(second, d.costs[i].pct);
    d.confidence = kSampleConfidence * d.costs.front().pct / (d.costs.front().pct + second);
    if (!starved && !a.sm) d.confidence *= kNoGpmFactor;  // compute vs memory unknown
  }
}

std::string gpu_lead_text(const GpuActivity& a, size_t n_gpus, const LiveAnalysis& la, Category busy_cat,
                          const Finding* host_top, const Finding* pcie, bool starved, const Finding*& named) {
  if (a.window_s <= 0 && a.busy <= 0) {
    named = host_top;
    return fmt::format("{} ran nothing during the {:.1f} s run{}", a.who, la.duration_s,
                       host_top ? fmt::format("; on the host: {}", host_top->title) : std::string());
  }
  if (starved) {
    named = host_top;
    return host_top ? fmt::format("{}, so it is starved: {}", a.lead, host_top->title)
                    : fmt::format(
                          "{} and nothing on the host explains the idle time (`chokepoint run --trace` "
                          "shows where the gaps come from)",
                          a.lead);
  }
  if (busy_cat == Category::kTransfer) {  // pcie != nullptr
    named = pcie;
    return fmt::format("{}, limited by host<->device transfers: {}", a.lead, pcie->title);
  }
  if (busy_cat == Category::kMemory) {
    return fmt::format("{}, bound by memory bandwidth (DRAM activity {:.0f}%)", a.lead, *a.dram);
  }
  return fmt::format("{}, bound by {} own compute{}", a.lead, n_gpus == 1 ? "its" : "their",
                     a.sm ? fmt::format(" (SM activity {:.0f}%{})", *a.sm,
                                        a.tensor ? fmt::format(", tensor cores {:.0f}%", *a.tensor) : std::string())
                          : std::string(" (no GPM metrics: SM, tensor and DRAM activity unknown)"));
}

// Most of the run passed before the GPU's first work: a host-side finding about that
// start-up (Finding::before_gpu_work) is the verdict, the GPU's own window after it the
// context. 32 CPU-burning processes on 16 CPUs held a GPU loop back for 10 of 13 s on the
// H100; the verdict read `compute` over the 3 s after (issue 42).
constexpr double kLateStartShare = 0.5;

void judge_late_start(Verdict& d, const LiveAnalysis& la, const std::vector<Finding>& findings) {
  const std::optional<double> first = sampled::first_gpu_work_s(la);
  if (!first || la.duration_s <= 0 || *first < kLateStartShare * la.duration_s) return;
  const Finding* f = first_of(findings, [](const Finding& x) { return x.before_gpu_work && host_side(x.category); });
  if (f == nullptr) return;  // the report's samples section gives the time of the first work
  d.bound = f->category;
  d.lead_finding = f->id;
  d.unknown_reason.clear();
  d.confidence = kSampleConfidence * *first / la.duration_s;
  d.lead = fmt::format("{}; once it started: {}", f->title, d.lead);  // its title says when the GPU started
}

// The lead's text, and the finding it names (the summary says which finding its remedy is for).
void set_gpu_lead(Verdict& d, const GpuActivity& a, size_t n_gpus, const LiveAnalysis& la, Category busy_cat,
                  const Finding* host_top, const Finding* pcie, bool starved) {
  const Finding* named = nullptr;
  d.lead = gpu_lead_text(a, n_gpus, la, busy_cat, host_top, pcie, starved, named);
  if (named != nullptr) d.lead_finding = named->id;
}
}  // namespace

Verdict sample_verdict(const SampleEvidence& ev, std::vector<Finding>& findings) {
  const LiveAnalysis& la = ev.la;
  rank_findings(findings);
  const Finding* host_top = find_host_top(findings);

  const auto gpus = la.judged_gpus();
  if (!la.gpu_metrics || gpus.empty()) return host_only_verdict(la, host_top);

  Verdict d;
  const double busy = mean_over(gpus, [](const GpuLive& g) { return analyses::sampled::busy_pct(g); }).value_or(0);
  if (busy >= kBusyMajorityPct) {
    demote_host_findings(findings, busy);
    host_top = find_host_top(findings);  // the sort moved the findings
  }
  const GpuActivity a = gpu_activity(gpus, la, busy);

  const Finding* pcie = first_of(findings, saturates_the_link);
  const Category busy_cat = pcie ? Category::kTransfer
                            : a.dram && *a.dram >= kDramHeavyPct && *a.dram >= a.tensor.value_or(0)
                                ? Category::kMemory
                                : Category::kCompute;
  const bool starved = busy < kBusyMajorityPct;
  gpu_costs(d, a, busy_cat, host_top, starved, la);
  set_gpu_lead(d, a, gpus.size(), la, busy_cat, host_top, pcie, starved);
  if (!ev.rec.meta.gpu_note.empty() && !gpus.empty()) {
    d.confidence *= kNoPidMatchFactor;
    d.lead += fmt::format(" (which processes used the GPUs is not known, {}: their load may include another job's)",
                          ev.rec.meta.gpu_note);
  }
  if (d.bound == Category::kIdle || d.bound == Category::kUnknown) {
    d.unknown_reason = a.window_s <= 0 && busy <= 0
                           ? "the GPU ran nothing while the workload was sampled"
                           : fmt::format(
                                 "the GPU was busy {:.0f}% of its active window and nothing the samples show "
                                 "explains the rest",
                                 busy);
    d.bound = Category::kUnknown;
  }
  judge_late_start(d, la, findings);
  return d;
}

}  // namespace chokepoint::rules
