// numa-mismatch: a process of the job is pinned to CPUs far from its GPU (another NUMA
// node or socket): its host<->device copies and pinned buffers cross the socket link.
// Judged only where there is a "far": several NUMA nodes, or GPU-local CPUs that are a
// strict subset of the machine's. Unpinned processes (allowed on every CPU) are left to
// `chokepoint doctor`: the scheduler may well run them near the GPU.
#include <algorithm>

#include <fmt/format.h>

#include "base/cpu_list.h"
#include "rules/checks/checks.h"
#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// Less than half of a process's allowed CPUs near its GPU: most of the time it runs far.
constexpr double kMinLocalFraction = 0.5;

// The processes using one GPU: how much of their CPU time runs far from it, and the one
// pinned farthest.
struct FarPinning {
  double far_cpu = 0, tree_cpu = 0, worst_local = 1;
  const ProcessLive* worst_p = nullptr;
};

FarPinning far_pinning(const SampleEvidence& c, const samples::GpuMeta& gm) {
  const auto& h = c.la.host;
  FarPinning fp;
  for (const ProcessLive& p : c.la.processes) {
    const bool on_gpu = gm.pids.empty() ? (is_main(p) || is_worker(p))
                                        : std::count(gm.pids.begin(), gm.pids.end(), p.meta.pid) > 0;
    const double cpu = p.cpu_pct ? p.cpu_pct->mean : 0;
    if (!on_gpu) continue;
    fp.tree_cpu += cpu;
    const auto& allowed = p.meta.cpus_allowed;
    if (!allowed || allowed->empty()) continue;
    if (h.cpu_count > 0 && allowed->size() >= static_cast<size_t>(h.cpu_count)) continue;  // unpinned
    const double local = static_cast<double>(intersect_cpus(*allowed, gm.local_cpus).size()) / allowed->size();
    if (local >= kMinLocalFraction) continue;
    fp.far_cpu += cpu * (1 - local);
    if (!fp.worst_p || local < fp.worst_local) fp.worst_p = &p, fp.worst_local = local;
  }
  return fp;
}

Finding numa_finding(const SampleEvidence& c, const GpuLive& g, const samples::GpuMeta& gm, const FarPinning& fp) {
  const auto& h = c.la.host;
  const ProcessLive* worst_p = fp.worst_p;
  const double worst_local = fp.worst_local;
  const double share = fp.tree_cpu > 0 ? 100 * fp.far_cpu / fp.tree_cpu : 100.0;
  Finding f = new_finding(share, std::nullopt);
  // Crossing the socket costs bandwidth and latency on copies, rarely the whole step.
  f.severity = std::min(f.severity, Severity::kWarning);  // at most a warning (info < warning < critical)
  const std::string allowed = format_cpu_list(*worst_p->meta.cpus_allowed), local = format_cpu_list(gm.local_cpus);
  f.title = fmt::format("PID {} ({}) is pinned to CPUs {} but {}'s local CPUs are {}", worst_p->meta.pid,
                        samples::role_name(worst_p->meta.role), allowed, gpu_label(g), local);
  f.detail = fmt::format(
      "Only {:.0f}% of the CPUs PID {} may run on are near {}{}; {:.0f}% of the CPU time of the "
      "processes using this GPU runs on the far side, so their copies and pinned buffers cross the "
      "inter-socket link ({} NUMA nodes).",
      100 * worst_local, worst_p->meta.pid, gpu_label(g),
      gm.numa_node ? fmt::format(" (NUMA node {})", *gm.numa_node) : std::string(), share,
      h.numa_nodes > 0 ? std::to_string(h.numa_nodes) : std::string("several"));
  f.evidence = {evidence_at_most("local_cpu_fraction_pct", 100 * worst_local, "%", 100 * kMinLocalFraction),
                evidence("far_cpu_time_pct", share, "%"),
                evidence("allowed_cpus", static_cast<double>(worst_p->meta.cpus_allowed->size()), "cpus"),
                evidence("gpu_local_cpus", static_cast<double>(gm.local_cpus.size()), "cpus")};
  f.recommendation = fmt::format(
      "Pin each GPU's processes to its local CPUs: `taskset -c {} ...` or `numactl --cpunodebind={} "
      "--membind={} ...` (per rank with torchrun: a wrapper script per LOCAL_RANK), and start "
      "DataLoader workers from the pinned process so they inherit the mask.",
      local, gm.numa_node ? std::to_string(*gm.numa_node) : std::string("<node>"),
      gm.numa_node ? std::to_string(*gm.numa_node) : std::string("<node>"));
  return f;
}
}  // namespace

std::optional<Finding> numa_mismatch(const SampleEvidence& c) {
  const auto& h = c.la.host;
  std::optional<Finding> worst;
  for (const GpuLive* g : c.la.judged_gpus()) {
    const auto gm = std::find_if(c.rec.meta.gpus.begin(), c.rec.meta.gpus.end(),
                                 [&](const samples::GpuMeta& m) { return m.index == g->index; });
    if (gm == c.rec.meta.gpus.end() || gm->local_cpus.empty()) continue;
    const bool far_exists = h.numa_nodes > 1 ||
                            (h.cpu_count > 0 && gm->local_cpus.size() < static_cast<size_t>(h.cpu_count));
    if (!far_exists) continue;
    const FarPinning fp = far_pinning(c, *gm);
    if (fp.worst_p == nullptr) continue;
    Finding f = numa_finding(c, *g, *gm, fp);
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain numa-mismatch` prints.
extern const Rule numa_mismatch_rule = {
    .id = "numa-mismatch",
    .category = Category::kHost,
    .samples = numa_mismatch,
    .machine = checks::numa_mismatch,
    .bench = checks::bench_numa,
    .meaning =
        "A process of the job is pinned to CPUs far from its GPU (another NUMA node or socket): "
        "its copies and pinned buffers cross the socket link.",
    .detection =
        "From live samples and doctor: the process's allowed CPUs against the GPU's local CPUs "
        "(less than half near the GPU).",
    .action =
        "Pin each rank to its GPU's NUMA node (numactl --cpunodebind=N --membind=N, or the "
        "launcher's CPU affinity).",
};

}  // namespace chokepoint::rules
