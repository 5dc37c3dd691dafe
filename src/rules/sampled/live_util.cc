#include "rules/sampled/live_util.h"

#include <algorithm>

#include <fmt/format.h>

#include "machine/pcie_link.h"

namespace chokepoint::rules::sampled {

using samples::Entity;
using samples::ProcessRole;

const samples::Series* gpu_series(const SampleEvidence& c, const GpuLive& g, MetricId m) {
  return c.rec.samples.find(m, Entity::gpu(g.index));
}

const samples::Series* proc_series(const SampleEvidence& c, int64_t pid, MetricId m) {
  return c.rec.samples.find(m, Entity::process(pid));
}

const samples::Series* host_series(const SampleEvidence& c, MetricId m) {
  return c.rec.samples.find(m, Entity::host());
}

std::optional<double> tick_share(std::span<const int64_t> ticks,
                                 const std::function<std::optional<bool>(int64_t)>& pred) {
  int64_t n = 0, hit = 0;
  for (const int64_t t : ticks) {
    const std::optional<bool> v = pred(t);
    if (!v) continue;
    ++n;
    if (*v) ++hit;
  }
  // A share of one or two ticks is an anecdote, not a share of the run (issue 13: a 2 ms
  // `run -- true` on a busy host read CRITICAL cpu-oversubscribed from its only tick).
  if (n < kMinJudgedTicks) return std::nullopt;
  return static_cast<double>(hit) / static_cast<double>(n);
}

std::span<const int64_t> work_ticks(const LiveAnalysis& la) {
  int64_t a = -1, b = -1;
  for (const GpuLive* g : la.judged_gpus()) {
    if (g->active_start_ns < 0) continue;
    a = a < 0 ? g->active_start_ns : std::min(a, g->active_start_ns);
    b = std::max(b, g->active_end_ns);
  }
  if (a < 0) return la.tick_ns;
  const auto lo = std::lower_bound(la.tick_ns.begin(), la.tick_ns.end(), a);
  const auto hi = std::upper_bound(lo, la.tick_ns.end(), b);
  return {la.tick_ns.data() + (lo - la.tick_ns.begin()), static_cast<size_t>(hi - lo)};
}

namespace {
int64_t first_active_ns(const LiveAnalysis& la) {
  int64_t a = -1;
  for (const GpuLive* g : la.judged_gpus()) {
    if (g->active_start_ns >= 0) a = a < 0 ? g->active_start_ns : std::min(a, g->active_start_ns);
  }
  return a;
}
}  // namespace

std::optional<double> first_gpu_work_s(const LiveAnalysis& la) {
  const int64_t a = first_active_ns(la);
  if (a < 0) return std::nullopt;
  return static_cast<double>(std::max<int64_t>(0, a - la.start_ns)) / 1e9;
}

std::span<const int64_t> startup_ticks(const LiveAnalysis& la) {
  const int64_t a = first_active_ns(la);
  if (a < 0) return {};
  const auto hi = std::lower_bound(la.tick_ns.begin(), la.tick_ns.end(), a);
  return {la.tick_ns.data(), static_cast<size_t>(hi - la.tick_ns.begin())};
}

double pcie_gbps_per_direction(double gen, double width) {
  if (gen < 1 || width < 1) return 0;
  return machine::pcie_gbps_per_direction(static_cast<unsigned>(gen), static_cast<unsigned>(width));
}

std::string gpu_label(const GpuLive& g) {
  return g.name.empty() ? fmt::format("GPU {}", g.index) : fmt::format("GPU {} ({})", g.index, g.name);
}

bool is_main(const ProcessLive& p) {
  return p.meta.role == ProcessRole::kLaunched || p.meta.role == ProcessRole::kTorchrunRank;
}

bool is_worker(const ProcessLive& p) { return p.meta.role == ProcessRole::kDataLoaderWorker; }

}  // namespace chokepoint::rules::sampled
