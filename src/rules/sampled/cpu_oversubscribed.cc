// cpu-oversubscribed: more runnable threads than CPUs. The job's threads wait in the run
// queue (schedstat run delay) and get preempted: usually intra-op thread pools of every
// DataLoader worker (OMP/MKL default to all cores) on top of the training processes.
#include <algorithm>

#include <fmt/format.h>

#include "rules/checks/checks.h"
#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// The tree's threads waited for a CPU a fifth as long as they ran: a thread then makes
// 1/1.2 = 83% of the progress it could (schedstat run_delay vs run time).
constexpr double kMinWaitRatio = 0.2;
// ... judged only while the tree runs at least half a core: a process waking up for a
// moment waits in proportion to nothing (watching input_bound on the H200, 16 CPUs,
// 2 runnable tasks, flagged ticks where the tree ran 0.1 core).
constexpr double kMinTreeCores = 0.5;
// PSI cpu "some" avg10 of 20%: some runnable task waited a fifth of the time
// (Documentation/accounting/psi.rst).
constexpr double kMinPsiCpuSomePct = 20.0;
// /proc/stat procs_running is an instant count (it includes the reader): it tops the CPU
// count for a moment on a healthy host (17-20 on 16 CPUs with PSI cpu at 1%, H200). It
// is judged only without PSI, and only when clearly above the CPUs.
int runq_limit(int cpus) { return cpus + std::max(2, cpus / 4); }
// Oversubscription in a tenth of the ticks: sustained, not a burst at start-up.
constexpr double kMinShare = 0.10;
// Before the GPU's first work: a start-up of at least 2 s and a fifth of the run, the CPU
// oversubscribed in half of it. 32 CPU-burning processes on 16 CPUs kept a GPU loop from
// starting for 10 of 13 s on the H100; judged over the GPU's active window alone, the run
// read `compute` with no finding (issue 42).
constexpr double kMinStartupS = 2.0;
constexpr double kMinStartupShareOfRun = 0.2;
constexpr double kMinStartupOversubscribed = 0.5;
}  // namespace

namespace {

// Whether the CPU was oversubscribed at a tick (nullopt: nothing to judge it by).
class OversubscribedAt {
 public:
  explicit OversubscribedAt(const SampleEvidence& c)
      : cpus_(c.la.host.cpu_count),
        runq_(host_series(c, MetricId::kHostProcsRunning)),
        psi_(
            analyses::sampled::psi_series(c.rec.samples, MetricId::kHostPsiCpuSomePct, MetricId::kHostPsiCpuSomeAvg10)),
        age_(max_age_ns(c.la)) {
    for (const ProcessLive& p : c.la.processes) {
      tree_.emplace_back(proc_series(c, p.meta.pid, MetricId::kProcRunqWaitNsPerS),
                         proc_series(c, p.meta.pid, MetricId::kProcCpuPct));
    }
  }

  std::optional<bool> operator()(int64_t t) const {
    double wait = 0, run = 0;
    bool any = false;
    for (const auto& [w, cpu] : tree_) {
      const auto wv = analyses::sampled::held(w, t, age_), cv = analyses::sampled::held(cpu, t, age_);
      if (!wv || !cv) continue;
      any = true;
      wait += *wv / 1e9;
      run += *cv / 100;
    }
    // The job's own run delay, where sampled, is the evidence; the host-wide signals (PSI,
    // the run queue) stand in only without it: they also count other tenants' threads and
    // the job's own start-up (a 0.6 s CUDA program read "oversubscribed" from one PSI tick
    // at exec while its threads waited 0.002 s/s, on the H200).
    if (any) return run >= kMinTreeCores && wait >= kMinWaitRatio * run;
    const auto q = analyses::sampled::held(runq_, t, age_), p = analyses::sampled::held(psi_, t, age_);
    if (!(q && cpus_ > 0) && !p) return std::nullopt;
    return (!p && q && cpus_ > 0 && *q >= runq_limit(cpus_)) || p.value_or(0) >= kMinPsiCpuSomePct;
  }

 private:
  int cpus_;
  const samples::Series *runq_, *psi_;
  int64_t age_;
  std::vector<std::pair<const samples::Series*, const samples::Series*>> tree_;  // (run delay, cpu)
};

// The share of the run found oversubscribed: over the GPUs' active window, else over a long
// start-up before their first work (`startup_s` then set); nullopt below the bars.
std::optional<double> oversubscribed_share(const SampleEvidence& c, std::optional<double>& startup_s) {
  const OversubscribedAt at(c);
  const std::optional<double> share = tick_share(work_ticks(c.la), at);
  if (share && *share >= kMinShare) return share;
  const auto first = first_gpu_work_s(c.la);
  if (!first || *first < kMinStartupS || *first < kMinStartupShareOfRun * c.la.duration_s) return std::nullopt;
  const auto at_start = tick_share(startup_ticks(c.la), at);
  if (!at_start || *at_start < kMinStartupOversubscribed) return std::nullopt;
  startup_s = first;
  return *at_start * static_cast<double>(startup_ticks(c.la).size()) / static_cast<double>(c.la.tick_ns.size());
}

}  // namespace

std::optional<Finding> cpu_oversubscribed(const SampleEvidence& c) {
  const auto& h = c.la.host;
  double tree_wait = 0, tree_invol = 0;
  for (const ProcessLive& p : c.la.processes) {
    if (p.runq_wait_ns_per_s) tree_wait += p.runq_wait_ns_per_s->mean / 1e9;
    if (p.ctx_involuntary_per_s) tree_invol += p.ctx_involuntary_per_s->mean;
  }
  std::optional<double> startup_s;
  const std::optional<double> share = oversubscribed_share(c, startup_s);
  if (!share) return std::nullopt;
  const double tree_cores = c.la.tree_cpu_pct_mean / 100;
  Finding f = new_finding(100 * *share, std::nullopt);
  f.title = startup_s ? fmt::format(
                            "The GPU's first work came {:.1f} s into the {:.1f} s run, the CPU oversubscribed "
                            "before it: the job's threads wait {:.2f} s per second for a CPU",
                            *startup_s, c.la.duration_s, tree_wait)
                      : fmt::format(
                            "CPU oversubscribed in {:.0f}% of the run: the job's threads wait {:.2f} s per second "
                            "for a CPU",
                            100 * *share, tree_wait);
  f.detail = fmt::format(
      "The process tree ran on {:.1f} cores on average and its threads spent {:.2f} s/s runnable but "
      "waiting ({:.0f}% of their run time), with {:.0f} preemptions/s{}{}.",
      tree_cores, tree_wait, tree_cores > 0 ? 100 * tree_wait / tree_cores : 0.0, tree_invol,
      h.procs_running && h.cpu_count > 0
          ? fmt::format("; {:.0f} runnable tasks (median) for {} CPUs", h.procs_running->p50, h.cpu_count)
          : "",
      h.psi_cpu_some ? fmt::format("; PSI cpu some {:.1f}%", h.psi_cpu_some->mean) : "");
  f.evidence = {evidence("oversubscribed_ticks_pct", 100 * *share, "%", 100 * kMinShare),
                evidence("tree_runq_wait_s_per_s", tree_wait, "s/s"),
                evidence("tree_involuntary_switches_per_s", tree_invol, "1/s"),
                evidence("tree_cpu_cores", tree_cores, "cores")};
  if (h.procs_running && h.cpu_count > 0)
    f.evidence.push_back(evidence("procs_running_p50", h.procs_running->p50, "tasks"));
  if (h.psi_cpu_some) f.evidence.push_back(evidence("psi_cpu_some_mean_pct", h.psi_cpu_some->mean, "%"));
  if (startup_s) {
    f.evidence.push_back(evidence("first_gpu_work_s", *startup_s, "s", kMinStartupS));
    f.before_gpu_work = true;
  }
  f.recommendation = fmt::format(
      "Match threads to cores: OMP_NUM_THREADS / torch.set_num_threads(cores per process), 1 in "
      "DataLoader workers (worker_init_fn; also cv2.setNumThreads(0)), and num_workers + training "
      "processes <= {} CPUs; stop other CPU-heavy jobs on the node or pin them elsewhere (taskset).",
      h.cpu_count > 0 ? fmt::format("the {}", h.cpu_count) : std::string("the available"));
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain cpu-oversubscribed` prints.
extern const Rule cpu_oversubscribed_rule = {
    .id = "cpu-oversubscribed",
    .category = Category::kHost,
    .samples = cpu_oversubscribed,
    .bench = checks::bench_host_busy,
    .meaning =
        "More runnable threads than CPUs: the job's threads wait in the run queue, usually every "
        "DataLoader worker running intra-op thread pools on all cores.",
    .detection =
        "From live samples: the tree's threads waited for a CPU a fifth as long as they ran "
        "(schedstat), judged while the tree uses at least half a core.",
    .action =
        "Set OMP_NUM_THREADS / torch.set_num_threads(1) in workers (worker_init_fn), fewer "
        "workers, or more CPUs.",
};

}  // namespace chokepoint::rules
