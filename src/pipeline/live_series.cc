#include "pipeline/live_series.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace chokepoint::pipeline {
namespace {

using samples::MetricId;

// Points per chart: finer than a laptop screen's chart needs, small in the page.
constexpr size_t kBuckets = 240;

struct Bucketing {
  int64_t start_ns = 0;
  double bucket_ns = 1;
  size_t n = 0;
};

// Mean of the valid samples per bucket; NaN for none.
std::vector<double> bucket_means(const samples::Series& s, const Bucketing& b, double scale) {
  std::vector<double> sum(b.n, 0), count(b.n, 0);
  for (size_t i = 0; i < s.size(); ++i) {
    if (!s.valid[i] || !std::isfinite(s.values[i])) continue;
    const double k = std::floor(static_cast<double>(s.time_ns[i] - b.start_ns) / b.bucket_ns);
    if (k < 0) continue;
    const auto idx = static_cast<size_t>(std::min(static_cast<double>(b.n - 1), k));  // clamped before the cast
    sum[idx] += s.values[i] * scale;
    count[idx] += 1;
  }
  std::vector<double> out(b.n, std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < b.n; ++i) {
    if (count[i] > 0) out[i] = sum[i] / count[i];
  }
  return out;
}

struct GpuMetric {
  MetricId metric;
  const char* group;  // appended to "GPU <index> "
  const char* name;
  const char* unit;
  double scale;
};

constexpr GpuMetric kGpuMetrics[] = {
    {MetricId::kGpuUtilization, "activity", "utilization", "%", 1},
    {MetricId::kGpuSmActive, "activity", "SM active", "%", 1},
    {MetricId::kGpuTensorActive, "activity", "tensor active", "%", 1},
    {MetricId::kGpuDramActive, "activity", "DRAM active", "%", 1},
    {MetricId::kGpuPcieRxBytesPerS, "PCIe", "to GPU", "GB/s", 1e-9},
    {MetricId::kGpuPcieTxBytesPerS, "PCIe", "from GPU", "GB/s", 1e-9},
};

void add_gpu_series(report::LiveSummary& out, const samples::Recording& rec, const Bucketing& b) {
  for (const GpuMetric& m : kGpuMetrics) {
    for (const samples::Series* s : rec.samples.of_metric(m.metric)) {
      std::string group = "GPU " + std::to_string(s->entity.id) + " ";
      group += m.group;
      out.series.push_back({std::move(group), m.name, m.unit, bucket_means(*s, b, m.scale)});
    }
  }
  // One chart per group, in GPU order.
  std::stable_sort(out.series.begin(), out.series.end(),
                   [](const report::LiveSeries& x, const report::LiveSeries& y) { return x.group < y.group; });
}

void add_host_series(report::LiveSummary& out, const samples::Recording& rec, const Bucketing& b) {
  const std::pair<MetricId, const char*> host[] = {{MetricId::kHostCpuUserPct, "user"},
                                                   {MetricId::kHostCpuSystemPct, "system"},
                                                   {MetricId::kHostCpuIowaitPct, "iowait"}};
  for (const auto& [metric, name] : host) {
    if (const samples::Series* s = rec.samples.find(metric, samples::Entity::host())) {
      out.series.push_back({"Host CPU (share of all CPUs)", name, "%", bucket_means(*s, b, 1)});
    }
  }
}

// The DataLoader workers together (100 = one core): summed bucket by bucket.
void add_worker_series(report::LiveSummary& out, const samples::Recording& rec, const Bucketing& b) {
  std::vector<double> total(b.n, std::numeric_limits<double>::quiet_NaN());
  bool any = false;
  for (const samples::ProcessMeta& p : rec.meta.processes) {
    if (p.role != samples::ProcessRole::kDataLoaderWorker) continue;
    const samples::Series* s = rec.samples.find(MetricId::kProcCpuPct, samples::Entity::process(p.pid));
    if (s == nullptr) continue;
    const std::vector<double> v = bucket_means(*s, b, 1);
    for (size_t i = 0; i < b.n; ++i) {
      if (std::isnan(v[i])) continue;
      total[i] = (std::isnan(total[i]) ? 0 : total[i]) + v[i];
      any = true;
    }
  }
  if (any) out.series.push_back({"DataLoader workers CPU (100 = one core)", "workers", "%", std::move(total)});
}

}  // namespace

void add_live_series(report::LiveSummary& s, const samples::Recording& rec, int64_t start_ns, int64_t end_ns) {
  if (end_ns <= start_ns) return;
  Bucketing b;
  b.start_ns = start_ns;
  b.n = std::min<size_t>(kBuckets, std::max<uint64_t>(1, rec.ticks));
  b.bucket_ns = static_cast<double>(end_ns - start_ns) / static_cast<double>(b.n);
  if (b.bucket_ns <= 0) return;
  add_gpu_series(s, rec, b);
  add_host_series(s, rec, b);
  add_worker_series(s, rec, b);
  s.series_bucket_s = b.bucket_ns / 1e9;
}

}  // namespace chokepoint::pipeline
