#include "rules/sampled/starvation.h"

#include <algorithm>
#include <vector>

#include "rules/sampled/live_util.h"

namespace chokepoint::rules::sampled {
namespace {
// See starvation.h for where these come from.
constexpr double kCopyingBytesPerS = 2e9;
constexpr double kTinyKernelRatio = 3.0;
constexpr double kTinyKernelMaxSmPct = 10.0;
// ... and kernels ran at least a tenth of the tick (input_bound's GPU, idle between
// batches, read 6% at p95: no kernel stream to speak of).
constexpr double kTinyKernelMinUtilPct = 10.0;
// A main process reading its input from storage this fast is loading data itself
// (num_workers=0 over files); below it, reads are checkpoints, logs or imports.
constexpr double kLoadingReadBytesPerS = 10e6;
// The what-if needs the GPU's rate when fed: at least this many fed ticks.
constexpr int64_t kMinFedTicks = 3;
}  // namespace

std::optional<double> Starvation::speedup_without(StarveCause c) const {
  const Cause& k = of(c);
  if (fed < kMinFedTicks || k.ticks == 0 || measured == 0) return std::nullopt;
  const double fed_pct = fed_busy / static_cast<double>(fed);
  const double after = static_cast<double>(measured - k.ticks) + k.busy / fed_pct;
  return after > 0 ? std::optional<double>(static_cast<double>(measured) / after) : std::nullopt;
}

Starvation starvation(const SampleEvidence& c, const analyses::sampled::GpuLive& g) {
  using analyses::sampled::held;
  const samples::Series* busy = analyses::sampled::activity_series(c.rec.samples, g.index);
  const samples::Series* sm = gpu_series(c, g, MetricId::kGpuSmActive);
  const samples::Series* util = gpu_series(c, g, MetricId::kGpuUtilization);
  const samples::Series* rx = gpu_series(c, g, MetricId::kGpuPcieRxBytesPerS);
  const samples::Series* tx = gpu_series(c, g, MetricId::kGpuPcieTxBytesPerS);
  std::vector<const samples::Series*> workers, mains, main_reads;
  for (const auto& p : c.la.processes) {
    if (is_worker(p)) workers.push_back(proc_series(c, p.meta.pid, MetricId::kProcCpuPct));
    if (is_main(p)) {
      mains.push_back(proc_series(c, p.meta.pid, MetricId::kProcCpuPct));
      main_reads.push_back(proc_series(c, p.meta.pid, MetricId::kProcReadBytesPerS));
    }
  }
  const int64_t age = max_age_ns(c.la);
  // GPM arrives once a second (default --gpm-interval): hold its values that long.
  const int64_t gpm_age = std::max<int64_t>(age, 1'500'000'000);
  auto saturated = [&](const std::vector<const samples::Series*>& v, int64_t t) {
    return std::any_of(v.begin(), v.end(),
                       [&](const samples::Series* s) { return held(s, t, age).value_or(0) >= kSaturatedCpuPct; });
  };
  Starvation n;
  for (const int64_t t : analyses::sampled::active_ticks(c.la, g)) {
    const std::optional<double> u = held(busy, t, busy == sm ? gpm_age : age);
    if (!u) continue;
    ++n.measured;
    if (*u >= kStarvedBelowPct) {
      ++n.fed;
      n.fed_busy += *u;
      continue;
    }
    const bool by_workers = saturated(workers, t);
    const bool by_main = saturated(mains, t);
    if (!by_workers && !by_main) continue;
    const double pcie = held(rx, t, gpm_age).value_or(0) + held(tx, t, gpm_age).value_or(0);
    const std::optional<double> s = held(sm, t, gpm_age);
    const std::optional<double> k = held(util, t, age);
    const bool reading = std::any_of(main_reads.begin(), main_reads.end(), [&](const samples::Series* s) {
      return held(s, t, age).value_or(0) >= kLoadingReadBytesPerS;
    });
    StarveCause cause = by_workers || reading ? StarveCause::kInput : StarveCause::kHost;
    if (by_main && !by_workers && pcie >= kCopyingBytesPerS) {
      cause = StarveCause::kTransfer;
    } else if (by_main && !by_workers && s && k && *s < kTinyKernelMaxSmPct && *k >= kTinyKernelMinUtilPct &&
               *k >= kTinyKernelRatio * *s) {
      cause = StarveCause::kLaunch;
    }
    Starvation::Cause& x = n.causes[static_cast<int>(cause)];
    ++x.ticks;
    x.busy += *u;
    x.pcie_bytes_per_s += pcie;
    if (s) x.sm += *s, ++x.sm_ticks;
    if (by_workers) ++x.by_workers;
  }
  return n;
}

std::optional<LoaderGain> loader_gain(const SampleEvidence& c, const analyses::sampled::GpuLive& g, int cpus) {
  using analyses::sampled::held;
  const samples::Series* busy = analyses::sampled::activity_series(c.rec.samples, g.index);
  const samples::Series* sm = gpu_series(c, g, MetricId::kGpuSmActive);
  std::vector<const samples::Series*> workers;
  for (const auto& p : c.la.processes) {
    if (is_worker(p)) workers.push_back(proc_series(c, p.meta.pid, MetricId::kProcCpuPct));
  }
  if (workers.empty()) return std::nullopt;
  const int64_t age = max_age_ns(c.la);
  const int64_t busy_age = busy == sm ? std::max<int64_t>(age, 1'500'000'000) : age;
  LoaderGain r;
  r.workers = static_cast<int>(workers.size());
  std::vector<double> span, fed;
  for (const int64_t t : analyses::sampled::active_ticks(c.la, g)) {
    const auto saturated = std::count_if(workers.begin(), workers.end(), [&](const samples::Series* s) {
      return held(s, t, age).value_or(0) >= kSaturatedCpuPct;
    });
    if (2 * saturated < static_cast<int64_t>(workers.size())) continue;
    const std::optional<double> u = held(busy, t, busy_age);
    if (!u) continue;
    span.push_back(*u);
    if (*u >= kStarvedBelowPct) fed.push_back(*u);
  }
  r.ticks = static_cast<int64_t>(span.size());
  r.fed = static_cast<int64_t>(fed.size());
  if (r.fed < kMinFedTicks) return std::nullopt;
  const size_t q = std::min(fed.size() - 1, static_cast<size_t>(0.75 * static_cast<double>(fed.size())));
  std::nth_element(fed.begin(), fed.begin() + static_cast<std::ptrdiff_t>(q), fed.end());
  r.fed_busy = fed[q];
  // Each tick's GPU work, done at the fed rate (ticks already above it stay whole).
  double sum = 0, after = 0;
  for (const double u : span) sum += u, after += std::min(u, r.fed_busy) / r.fed_busy;
  r.mean_busy = sum / static_cast<double>(r.ticks);
  r.speedup = after > 0 ? static_cast<double>(r.ticks) / after : 1.0;
  if (cpus > 0) {
    r.max_workers = std::max(r.workers, cpus - 2);
    const double cap = static_cast<double>(r.max_workers) / r.workers;
    if (cap < r.speedup) r.speedup = cap, r.capped = true;
  }
  if (r.speedup <= 1.0) return std::nullopt;
  return r;
}

}  // namespace chokepoint::rules::sampled
