#include "analyses/sampled/live_analysis.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "samples/clock_reasons.h"

namespace chokepoint::analyses::sampled {
namespace {

using samples::Entity;
using samples::MetricId;
using samples::Series;

// The active window's edges (see analyze_gpu).
constexpr double kActiveShareOfUsual = 0.5;
constexpr double kMinActivePct = 1.0;

std::pair<size_t, size_t> window_range(const Series& s, int64_t start_ns, int64_t end_ns) {
  const auto b = std::lower_bound(s.time_ns.begin(), s.time_ns.end(), start_ns);
  const auto e = std::upper_bound(b, s.time_ns.end(), end_ns);
  return {static_cast<size_t>(b - s.time_ns.begin()), static_cast<size_t>(e - s.time_ns.begin())};
}

int host_int(const samples::RunMeta& m, const char* key) {
  const auto it = m.host.find(key);
  if (it == m.host.end()) return 0;
  int v = 0;
  std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  return v;
}

bool names_python(const samples::ProcessMeta& p) {
  auto base = [](const std::string& s) {
    const auto slash = s.rfind('/');
    return slash == std::string::npos ? s : s.substr(slash + 1);
  };
  if (!p.cmdline.empty() && base(p.cmdline[0]).rfind("python", 0) == 0) return true;
  return p.comm.rfind("python", 0) == 0;
}

std::optional<double> max_valid(const Series* s) {
  if (s == nullptr) return std::nullopt;
  std::optional<double> m;
  for (size_t i = 0; i < s->size(); ++i) {
    if (s->valid[i]) m = std::max(m.value_or(s->values[i]), s->values[i]);
  }
  return m;
}

std::optional<double> max_valid_in(const Series* s, int64_t start_ns, int64_t end_ns) {
  if (s == nullptr) return std::nullopt;
  std::optional<double> m;
  const auto [b, e] = window_range(*s, start_ns, end_ns);
  for (size_t i = b; i < e; ++i) {
    if (s->valid[i]) m = std::max(m.value_or(s->values[i]), s->values[i]);
  }
  return m;
}

bool has_valid_reading(const samples::SampleStore& st, const Entity& e) {
  for (const Series& s : st.series()) {
    if (s.entity == e && std::find(s.valid.begin(), s.valid.end(), 1) != s.valid.end()) return true;
  }
  return false;
}

// Active window: nvidia-smi utilization when it reads, else GPM SM activity; from the
// first to the last tick at least half as busy as the GPU's usual busy level (the 90th
// percentile of its non-zero readings). That leaves out CUDA initialisation, model
// building and warm-up, where a few kernels run while the host does one-off work
// (healthy_bf16 on the H200: 8.8 s of such a start read as a stall otherwise).
void set_active_window(const Series& activity, GpuLive& out) {
  std::vector<double> positive;
  for (size_t i = 0; i < activity.size(); ++i) {
    if (activity.valid[i] && activity.values[i] > 0) positive.push_back(activity.values[i]);
  }
  if (positive.empty()) return;
  const size_t k = std::min(positive.size() - 1, static_cast<size_t>(0.9 * static_cast<double>(positive.size())));
  std::nth_element(positive.begin(), positive.begin() + static_cast<std::ptrdiff_t>(k), positive.end());
  const double level = std::max(kMinActivePct, kActiveShareOfUsual * positive[k]);
  for (size_t i = 0; i < activity.size(); ++i) {
    if (!activity.valid[i] || activity.values[i] < level) continue;
    if (out.active_start_ns < 0) out.active_start_ns = activity.time_ns[i];
    out.active_end_ns = activity.time_ns[i];
  }
}

// The share of readings in [a, b] that show each clock event reason, largest first.
std::vector<ClockReasonShare> clock_reason_shares(const Series& r, int64_t a, int64_t b) {
  std::vector<ClockReasonShare> out;
  const auto [lo, hi] = window_range(r, a, b);
  int64_t n = 0;
  std::map<uint64_t, int64_t> counts;
  for (size_t i = lo; i < hi; ++i) {
    if (!r.valid[i]) continue;
    ++n;
    const auto mask = static_cast<uint64_t>(r.values[i]);
    for (const samples::ClockEventReason& rn : samples::clock_event_reasons()) {
      if (rn.holds_busy_clocks && (mask & rn.bit)) ++counts[rn.bit];
    }
  }
  for (const samples::ClockEventReason& rn : samples::clock_event_reasons()) {
    if (counts[rn.bit] > 0) {
      out.push_back({rn.bit, rn.name, static_cast<double>(counts[rn.bit]) / static_cast<double>(n)});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ClockReasonShare& x, const ClockReasonShare& y) { return x.share > y.share; });
  return out;
}

GpuLive analyze_gpu(const samples::Recording& rec, const samples::GpuMeta& g, const LiveAnalysis& la) {
  const samples::SampleStore& st = rec.samples;
  const Entity e = Entity::gpu(g.index);
  auto find = [&](MetricId m) { return st.find(m, e); };
  GpuLive out;
  out.index = g.index;
  out.name = g.name;
  out.used = g.used;
  out.has_metrics = has_valid_reading(st, e);
  if (const Series* activity = activity_series(st, g.index); activity != nullptr) set_active_window(*activity, out);
  int64_t a = la.start_ns, b = la.end_ns;
  if (out.active_start_ns >= 0) {
    a = out.active_start_ns;
    b = out.active_end_ns;
    out.active_ticks = static_cast<int64_t>(std::upper_bound(la.tick_ns.begin(), la.tick_ns.end(), b) -
                                            std::lower_bound(la.tick_ns.begin(), la.tick_ns.end(), a));
  }
  out.util = stat_of(find(MetricId::kGpuUtilization), a, b);
  out.sm_active = stat_of(find(MetricId::kGpuSmActive), a, b);
  out.sm_occupancy = stat_of(find(MetricId::kGpuSmOccupancy), a, b);
  out.tensor_active = stat_of(find(MetricId::kGpuTensorActive), a, b);
  out.dram_active = stat_of(find(MetricId::kGpuDramActive), a, b);
  out.gr_active = stat_of(find(MetricId::kGpuGrEngineActive), a, b);
  out.pcie_rx = stat_of(find(MetricId::kGpuPcieRxBytesPerS), a, b);
  out.pcie_tx = stat_of(find(MetricId::kGpuPcieTxBytesPerS), a, b);
  out.power_w = stat_of(find(MetricId::kGpuPowerW), a, b);
  out.sm_clock_mhz = stat_of(find(MetricId::kGpuSmClockMhz), a, b);
  out.temperature_c = stat_of(find(MetricId::kGpuTemperatureC), a, b);
  out.mem_used_max_bytes = max_valid(find(MetricId::kGpuMemoryUsedBytes));
  out.mem_total_bytes = max_valid(find(MetricId::kGpuMemoryTotalBytes));
  out.power_limit_w = max_valid(find(MetricId::kGpuPowerLimitW));
  out.link_gen_max = max_valid(find(MetricId::kGpuPcieLinkGenMax));
  if (!out.link_gen_max && g.max_link_gen) out.link_gen_max = *g.max_link_gen;
  out.link_width_max = max_valid(find(MetricId::kGpuPcieLinkWidthMax));
  if (!out.link_width_max && g.max_link_width) out.link_width_max = *g.max_link_width;
  out.link_gen_seen = max_valid_in(find(MetricId::kGpuPcieLinkGen), a, b);
  out.link_width_seen = max_valid_in(find(MetricId::kGpuPcieLinkWidth), a, b);

  if (const Series* r = find(MetricId::kGpuClockEventReasons); r != nullptr && out.active_start_ns >= 0) {
    out.clock_reasons = clock_reason_shares(*r, a, b);
  }
  return out;
}

ProcessLive analyze_process(const samples::Recording& rec, const samples::ProcessMeta& p, int64_t start_ns,
                            int64_t end_ns) {
  const samples::SampleStore& st = rec.samples;
  const Entity e = Entity::process(p.pid);
  ProcessLive out;
  out.meta = p;
  out.python = names_python(p);
  out.cpu_pct = stat_of(st.find(MetricId::kProcCpuPct, e), start_ns, end_ns);
  out.threads_running = stat_of(st.find(MetricId::kProcThreadsRunning, e), start_ns, end_ns);
  out.ctx_involuntary_per_s = stat_of(st.find(MetricId::kProcCtxInvoluntaryPerS, e), start_ns, end_ns);
  out.ctx_voluntary_per_s = stat_of(st.find(MetricId::kProcCtxVoluntaryPerS, e), start_ns, end_ns);
  out.runq_wait_ns_per_s = stat_of(st.find(MetricId::kProcRunqWaitNsPerS, e), start_ns, end_ns);
  out.read_bytes_per_s = stat_of(st.find(MetricId::kProcReadBytesPerS, e), start_ns, end_ns);
  if (const Series* cpu = st.find(MetricId::kProcCpuPct, e); cpu != nullptr && cpu->size() > 0) {
    out.seen_s = (static_cast<double>(cpu->time_ns.back()) - static_cast<double>(cpu->time_ns.front())) / 1e9;
  }
  for (const Series* s : st.of_metric(MetricId::kThreadCpuPct)) {
    if (s->entity.pid != p.pid) continue;
    if (auto t = stat_of(s, start_ns, end_ns)) {
      const auto name = p.thread_names.find(s->entity.id);
      out.threads.push_back(
          {s->entity.id, name == p.thread_names.end() ? std::string() : name->second, t->mean, t->p50, t->n});
    }
  }
  std::sort(out.threads.begin(), out.threads.end(),
            [](const ThreadLive& x, const ThreadLive& y) { return x.cpu_pct_mean > y.cpu_pct_mean; });
  return out;
}

}  // namespace

std::optional<Stat> stat_of(const Series* s, int64_t start_ns, int64_t end_ns) {
  if (s == nullptr) return std::nullopt;
  const auto [b, e] = window_range(*s, start_ns, end_ns);
  std::vector<double> v;
  v.reserve(e - b);
  for (size_t i = b; i < e; ++i) {
    if (s->valid[i]) v.push_back(s->values[i]);
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  Stat st;
  st.n = static_cast<int64_t>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  st.mean = sum / static_cast<double>(v.size());
  auto pick = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
  };
  st.p50 = pick(0.5);
  st.p95 = pick(0.95);
  st.min = v.front();
  st.max = v.back();
  return st;
}

std::optional<double> share_at_least(const Series* s, double threshold, int64_t start_ns, int64_t end_ns) {
  if (s == nullptr) return std::nullopt;
  const auto [b, e] = window_range(*s, start_ns, end_ns);
  int64_t n = 0, hit = 0;
  for (size_t i = b; i < e; ++i) {
    if (!s->valid[i]) continue;
    ++n;
    if (s->values[i] >= threshold) ++hit;
  }
  if (n == 0) return std::nullopt;
  return static_cast<double>(hit) / static_cast<double>(n);
}

std::optional<double> held(const Series* s, int64_t t_ns, int64_t max_age_ns) {
  if (s == nullptr) return std::nullopt;
  auto it = std::upper_bound(s->time_ns.begin(), s->time_ns.end(), t_ns);
  while (it != s->time_ns.begin()) {
    --it;
    if (static_cast<double>(t_ns) - static_cast<double>(*it) > static_cast<double>(max_age_ns)) return std::nullopt;
    const size_t i = static_cast<size_t>(it - s->time_ns.begin());
    if (s->valid[i]) return s->values[i];
  }
  return std::nullopt;
}

const Series* psi_series(const samples::SampleStore& st, MetricId pct, MetricId avg10) {
  const Series* p = st.find(pct, Entity::host());
  if (p != nullptr && std::find(p->valid.begin(), p->valid.end(), 1) != p->valid.end()) return p;
  return st.find(avg10, Entity::host());
}

const Series* activity_series(const samples::SampleStore& st, int64_t gpu_index) {
  const Entity e = Entity::gpu(gpu_index);
  const Series* util = st.find(MetricId::kGpuUtilization, e);
  if (util != nullptr && std::find(util->valid.begin(), util->valid.end(), 1) != util->valid.end()) return util;
  return st.find(MetricId::kGpuSmActive, e);
}

std::optional<double> busy_pct(const GpuLive& g) {
  if (g.util) return g.util->mean;
  if (g.sm_active) return g.sm_active->mean;
  return std::nullopt;
}

std::span<const int64_t> active_ticks(const LiveAnalysis& la, const GpuLive& g) {
  if (g.active_start_ns < 0) return {};
  const auto b = std::lower_bound(la.tick_ns.begin(), la.tick_ns.end(), g.active_start_ns);
  const auto e = std::upper_bound(b, la.tick_ns.end(), g.active_end_ns);
  return {la.tick_ns.data() + (b - la.tick_ns.begin()), static_cast<size_t>(e - b)};
}

std::vector<const GpuLive*> LiveAnalysis::judged_gpus() const {
  std::vector<const GpuLive*> out;
  for (const GpuLive& g : gpus) {
    if (g.used && g.has_metrics) out.push_back(&g);
  }
  return out;
}

const ProcessLive* LiveAnalysis::process(int64_t pid) const {
  for (const ProcessLive& p : processes) {
    if (p.meta.pid == pid) return &p;
  }
  return nullptr;
}

LiveAnalysis analyze_recording(const samples::Recording& rec) {
  LiveAnalysis la;
  // Tick times: the union of all series' times (every tick carries host samples).
  std::vector<int64_t> times;
  for (const Series& s : rec.samples.series()) {
    if (s.entity.kind == samples::EntityKind::kHost || s.entity.kind == samples::EntityKind::kGpu) {
      times.insert(times.end(), s.time_ns.begin(), s.time_ns.end());
    }
  }
  if (times.empty()) {
    for (const Series& s : rec.samples.series()) times.insert(times.end(), s.time_ns.begin(), s.time_ns.end());
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  la.tick_ns = std::move(times);
  la.ticks = static_cast<int64_t>(la.tick_ns.size());
  if (!la.tick_ns.empty()) {
    la.start_ns = la.tick_ns.front();
    la.end_ns = la.tick_ns.back();
  } else {
    la.start_ns = rec.meta.start_ns;
    la.end_ns = rec.meta.end_ns.value_or(rec.meta.start_ns);
  }
  la.end_ns = std::max(la.end_ns, la.start_ns);  // a broken meta.json may end before it starts
  // Differences in double: timestamps of a damaged file may be anything.
  la.duration_s = (static_cast<double>(la.end_ns) - static_cast<double>(la.start_ns)) / 1e9;
  la.interval_ns = rec.meta.interval_ns;
  la.gpu_unavailable = rec.meta.gpu_unavailable;

  for (const samples::GpuMeta& g : rec.meta.gpus) {
    la.gpus.push_back(analyze_gpu(rec, g, la));
    la.gpu_metrics = la.gpu_metrics || la.gpus.back().has_metrics;
  }

  const samples::SampleStore& st = rec.samples;
  const Entity h = Entity::host();
  HostLive& host = la.host;
  host.cpu_count = host_int(rec.meta, "cpus");
  host.numa_nodes = host_int(rec.meta, "numa_nodes");
  auto hs = [&](MetricId m) { return stat_of(st.find(m, h), la.start_ns, la.end_ns); };
  host.user_pct = hs(MetricId::kHostCpuUserPct);
  host.system_pct = hs(MetricId::kHostCpuSystemPct);
  host.iowait_pct = hs(MetricId::kHostCpuIowaitPct);
  host.steal_pct = hs(MetricId::kHostCpuStealPct);
  host.idle_pct = hs(MetricId::kHostCpuIdlePct);
  host.procs_running = hs(MetricId::kHostProcsRunning);
  host.procs_blocked = hs(MetricId::kHostProcsBlocked);
  host.ctx_switches_per_s = hs(MetricId::kHostCtxSwitchesPerS);
  host.swap_in_per_s = hs(MetricId::kHostSwapInPagesPerS);
  host.swap_out_per_s = hs(MetricId::kHostSwapOutPagesPerS);
  host.major_faults_per_s = hs(MetricId::kHostMajorFaultsPerS);
  // PSI: the per-interval shares where recorded (from totals), else the 10 s averages.
  auto psi = [&](MetricId pct, MetricId avg10) {
    auto v = hs(pct);
    return v ? v : hs(avg10);
  };
  host.psi_cpu_some = psi(MetricId::kHostPsiCpuSomePct, MetricId::kHostPsiCpuSomeAvg10);
  host.psi_mem_some = psi(MetricId::kHostPsiMemorySomePct, MetricId::kHostPsiMemorySomeAvg10);
  host.psi_mem_full = psi(MetricId::kHostPsiMemoryFullPct, MetricId::kHostPsiMemoryFullAvg10);
  host.psi_io_some = psi(MetricId::kHostPsiIoSomePct, MetricId::kHostPsiIoSomeAvg10);
  host.psi_io_full = hs(MetricId::kHostPsiIoFullAvg10);
  host.disk_read_bytes_per_s = hs(MetricId::kHostDiskReadBytesPerS);
  host.mem_available_bytes = hs(MetricId::kHostMemAvailableBytes);
  if (const auto it = rec.meta.host.find("mem_total_bytes"); it != rec.meta.host.end()) {
    double v = 0;
    if (std::from_chars(it->second.data(), it->second.data() + it->second.size(), v).ec == std::errc()) {
      host.mem_total_bytes = v;
    }
  }

  for (const samples::ProcessMeta& p : rec.meta.processes) {
    la.processes.push_back(analyze_process(rec, p, la.start_ns, la.end_ns));
    if (la.processes.back().cpu_pct) la.tree_cpu_pct_mean += la.processes.back().cpu_pct->mean;
  }
  std::stable_sort(la.processes.begin(), la.processes.end(), [](const ProcessLive& x, const ProcessLive& y) {
    return (x.cpu_pct ? x.cpu_pct->mean : -1) > (y.cpu_pct ? y.cpu_pct->mean : -1);
  });
  return la;
}

}  // namespace chokepoint::analyses::sampled
