#include "sampler/proc/host_sampler.h"

#include <algorithm>
#include <iterator>

namespace chokepoint::sampler::proc {
namespace {

using samples::Entity;
using samples::MetricId;
using samples::Tick;

// A counter rate, or an invalid sample when either end is missing or it went backwards
// (a counter reset: never report a negative rate).
void add_rate(Tick& out, MetricId m, std::optional<uint64_t> before, std::optional<uint64_t> after, double dt_s,
              double scale = 1.0) {
  if (dt_s <= 0) return;  // first tick: no interval yet
  if (!before || !after || *after < *before) {
    out.add_invalid(m, Entity::host());
    return;
  }
  out.add(m, Entity::host(), static_cast<double>(*after - *before) * scale / dt_s);
}

}  // namespace

void HostSampler::sample(const samples::TickTime& now, Tick& out) {
  const double dt_s = last_mono_ns_ < 0 ? 0.0 : static_cast<double>(now.monotonic_ns - last_mono_ns_) / 1e9;
  last_mono_ns_ = now.monotonic_ns;
  sample_stat(dt_s, out);
  sample_vmstat(dt_s, out);
  sample_pressure(dt_s, out);
  sample_disks(dt_s, out);
  sample_meminfo(out);
}

void HostSampler::sample_stat(double dt_s, Tick& out) {
  std::optional<SystemStat> s;
  if (fs_.read("/proc/stat", buf_) == 0) s = parse_stat(buf_);
  const Entity host = Entity::host();
  if (!s) {
    for (MetricId m : {MetricId::kHostProcsRunning, MetricId::kHostProcsBlocked}) out.add_invalid(m, host);
    last_stat_.reset();
    return;
  }
  cpu_count_ = s->cpu_count;
  out.add(MetricId::kHostProcsRunning, host, static_cast<double>(s->procs_running));
  out.add(MetricId::kHostProcsBlocked, host, static_cast<double>(s->procs_blocked));
  if (last_stat_ && dt_s > 0) {
    const CpuTimes& a = last_stat_->cpu;
    const CpuTimes& b = s->cpu;
    if (b.total() > a.total()) {
      // Shares of the CPU time that passed on all CPUs: they sum to 100.
      const double total = static_cast<double>(b.total() - a.total());
      auto share = [&](uint64_t before, uint64_t after) {
        return after >= before ? 100.0 * static_cast<double>(after - before) / total : 0.0;
      };
      out.add(MetricId::kHostCpuUserPct, host, share(a.user + a.nice, b.user + b.nice));
      out.add(MetricId::kHostCpuSystemPct, host, share(a.system + a.irq + a.softirq, b.system + b.irq + b.softirq));
      out.add(MetricId::kHostCpuIowaitPct, host, share(a.iowait, b.iowait));
      out.add(MetricId::kHostCpuStealPct, host, share(a.steal, b.steal));
      out.add(MetricId::kHostCpuIdlePct, host, share(a.idle, b.idle));
    }
    add_rate(out, MetricId::kHostCtxSwitchesPerS, last_stat_->ctxt, s->ctxt, dt_s);
  }
  last_stat_ = s;
}

void HostSampler::sample_vmstat(double dt_s, Tick& out) {
  VmStat v;
  if (fs_.read("/proc/vmstat", buf_) == 0) v = parse_vmstat(buf_);
  add_rate(out, MetricId::kHostSwapInPagesPerS, last_vm_.pswpin, v.pswpin, dt_s);
  add_rate(out, MetricId::kHostSwapOutPagesPerS, last_vm_.pswpout, v.pswpout, dt_s);
  add_rate(out, MetricId::kHostMajorFaultsPerS, last_vm_.pgmajfault, v.pgmajfault, dt_s);
  last_vm_ = v;
}

void HostSampler::sample_pressure(double dt_s, Tick& out) {
  struct File {
    const char* path;
    MetricId some, full;
    MetricId some_pct, full_pct;  // kCount: not sampled
  };
  static constexpr File kFiles[] = {
      {"/proc/pressure/cpu", MetricId::kHostPsiCpuSomeAvg10, MetricId::kHostPsiCpuFullAvg10,
       MetricId::kHostPsiCpuSomePct, MetricId::kCount},
      {"/proc/pressure/memory", MetricId::kHostPsiMemorySomeAvg10, MetricId::kHostPsiMemoryFullAvg10,
       MetricId::kHostPsiMemorySomePct, MetricId::kHostPsiMemoryFullPct},
      {"/proc/pressure/io", MetricId::kHostPsiIoSomeAvg10, MetricId::kHostPsiIoFullAvg10, MetricId::kHostPsiIoSomePct,
       MetricId::kCount},
  };
  const Entity host = Entity::host();
  // Stall time over the interval, as a share of it: what avg10 smooths over 10 s.
  auto share = [&](MetricId m, std::optional<uint64_t> before, std::optional<uint64_t> after) {
    if (m == MetricId::kCount || dt_s <= 0 || !before || !after) return;
    if (*after < *before) return;  // counter reset: skip the tick
    out.add(m, host, std::min(100.0, 100.0 * static_cast<double>(*after - *before) / 1e6 / dt_s));
  };
  for (size_t i = 0; i < std::size(kFiles); ++i) {
    const File& f = kFiles[i];
    std::optional<Pressure> p;
    if (fs_.read(f.path, buf_) == 0) p = parse_pressure(buf_);
    if (p && p->some_avg10) out.add(f.some, host, *p->some_avg10);
    else out.add_invalid(f.some, host);
    if (p && p->full_avg10) out.add(f.full, host, *p->full_avg10);
    else out.add_invalid(f.full, host);
    if (p) {
      share(f.some_pct, last_psi_[i].some_total_us, p->some_total_us);
      share(f.full_pct, last_psi_[i].full_total_us, p->full_total_us);
      last_psi_[i] = *p;
    } else {
      last_psi_[i] = Pressure{};
      if (f.some_pct != MetricId::kCount) out.add_invalid(f.some_pct, host);
    }
  }
}

void HostSampler::sample_disks(double dt_s, Tick& out) {
  std::optional<DiskTotals> d;
  if (fs_.read("/proc/diskstats", buf_) == 0) d = parse_diskstats(buf_);
  // /proc/diskstats counts 512-byte sectors whatever the device's own sector size.
  constexpr double kSector = 512.0;
  if (last_disks_ && d && last_disks_->disks == d->disks) {
    add_rate(out, MetricId::kHostDiskReadBytesPerS, last_disks_->sectors_read, d->sectors_read, dt_s, kSector);
    add_rate(out, MetricId::kHostDiskWriteBytesPerS, last_disks_->sectors_written, d->sectors_written, dt_s, kSector);
  } else if (dt_s > 0) {
    // No file, or a disk came or went between ticks: the sums are not comparable.
    out.add_invalid(MetricId::kHostDiskReadBytesPerS, Entity::host());
    out.add_invalid(MetricId::kHostDiskWriteBytesPerS, Entity::host());
  }
  last_disks_ = d;
}

void HostSampler::sample_meminfo(Tick& out) {
  MemInfo m;
  if (fs_.read("/proc/meminfo", buf_) == 0) m = parse_meminfo(buf_);
  mem_total_ = m.mem_total_bytes;
  if (m.mem_available_bytes) {
    out.add(MetricId::kHostMemAvailableBytes, Entity::host(), static_cast<double>(*m.mem_available_bytes));
  } else {
    out.add_invalid(MetricId::kHostMemAvailableBytes, Entity::host());
  }
}

}  // namespace chokepoint::sampler::proc
