#include "sampler/gpu/gpu_sampler.h"

#include <signal.h>

#include <cerrno>
#include <limits>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include "sampler/nvml/ranges.h"

namespace chokepoint::sampler::gpu {
namespace {

using samples::Entity;
using samples::MetricId;
using samples::Tick;

template <typename T>
void put(Tick& out, MetricId m, const Entity& e, const nvml::Value<T>& v, double scale = 1.0) {
  if (v.valid) {
    out.add(m, e, static_cast<double>(v.value) * scale);
  } else {
    out.add_invalid(m, e);
  }
}

struct GpmMap {
  unsigned id;
  MetricId metric;
  double scale;
  double max;  // in GPM's unit; below 0 or above it the reading is invalid (nvml/ranges.h)
};
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kPct = nvml::range::kPctMax;
constexpr std::array<GpmMap, 7> kGpm = {{
    {nvml::gpm::kGraphicsUtil, MetricId::kGpuGrEngineActive, 1.0, kPct},
    {nvml::gpm::kSmUtil, MetricId::kGpuSmActive, 1.0, kPct},
    {nvml::gpm::kSmOccupancy, MetricId::kGpuSmOccupancy, 1.0, kPct},
    {nvml::gpm::kAnyTensorUtil, MetricId::kGpuTensorActive, 1.0, kPct},
    {nvml::gpm::kDramBwUtil, MetricId::kGpuDramActive, 1.0, kPct},
    {nvml::gpm::kPcieRxPerSec, MetricId::kGpuPcieRxBytesPerS, kMiB, nvml::range::kPcieMiBpsMax},  // GPM gives MiB/s
    {nvml::gpm::kPcieTxPerSec, MetricId::kGpuPcieTxBytesPerS, kMiB, nvml::range::kPcieMiBpsMax},
}};

}  // namespace

bool pid_exists_here(int64_t pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::optional<bool> holds_nvidia_device(const std::vector<int64_t>& pids) {
  bool any_read = false;
  for (int64_t pid : pids) {
    std::error_code ec;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      any_read = true;
      std::error_code lec;
      const std::string target = std::filesystem::read_symlink(it->path(), lec).string();
      if (!lec && target.rfind("/dev/nvidia", 0) == 0) return true;
    }
  }
  return any_read ? std::optional<bool>(false) : std::nullopt;
}

GpuUse match_gpu_processes(const std::vector<std::vector<int64_t>>& pids_per_gpu, const std::vector<int64_t>& tree_pids,
                           const std::function<bool(int64_t)>& exists_here,
                           const std::function<std::optional<bool>()>& tree_holds_gpu) {
  const std::set<int64_t> tree(tree_pids.begin(), tree_pids.end());
  GpuUse use;
  std::set<int64_t> others;
  for (size_t i = 0; i < pids_per_gpu.size(); ++i) {
    others.insert(pids_per_gpu[i].begin(), pids_per_gpu[i].end());
    if (std::any_of(pids_per_gpu[i].begin(), pids_per_gpu[i].end(), [&](int64_t p) { return tree.count(p) > 0; })) {
      use.gpus.push_back(static_cast<unsigned>(i));
    }
  }
  const auto here = static_cast<size_t>(std::count_if(others.begin(), others.end(), exists_here));
  // Most of the GPUs' PIDs are processes of this namespace, none of the tree: the GPUs
  // are someone else's (a CPU-only command beside another job), not a PID mismatch.
  if (use.gpus.empty() && !others.empty() && 2 * here >= others.size()) return use;
  // Not our namespace's PIDs, and the command holds no GPU open: someone else's GPUs.
  if (use.gpus.empty() && !others.empty() && tree_holds_gpu && tree_holds_gpu() == std::optional<bool>(false)) {
    return use;
  }
  if (use.gpus.empty() && !others.empty()) {
    use.pid_match_failed = true;
    use.note = "all GPUs, PID match failed";
    for (size_t i = 0; i < pids_per_gpu.size(); ++i) use.gpus.push_back(static_cast<unsigned>(i));
  }
  return use;
}

GpuSampler::GpuSampler(const nvml::Nvml& nvml, GpuSamplerOptions options) : nvml_(nvml), opt_(options) {
  const unsigned n = nvml_.device_count().value_or(0);
  for (unsigned i = 0; i < n; ++i) {
    auto d = nvml_.device(i);
    if (!d.valid) {
      skipped_.push_back("GPU " + std::to_string(i) + ": " + nvml_.error_string(d.error));
      continue;
    }
    Dev dev;
    dev.device = d.value;
    dev.gpm = dev.device.gpm_supported().value_or(false);
    devices_.push_back(std::move(dev));
  }
}

void GpuSampler::sample(const samples::TickTime& now, Tick& out) {
  for (Dev& d : devices_) {
    sample_classic(d, now, out);
    sample_gpm(d, now, out);
  }
}

void GpuSampler::sample_classic(Dev& d, const samples::TickTime& now, Tick& out) {
  const nvml::Device& dev = d.device;
  const Entity e = Entity::gpu(dev.index());
  const auto util = dev.utilization();
  put(out, MetricId::kGpuUtilization, e, util.with(util.value.gpu_pct));
  put(out, MetricId::kGpuMemoryUtilization, e, util.with(util.value.memory_pct));
  const auto mem = dev.memory_info();
  put(out, MetricId::kGpuMemoryUsedBytes, e, mem.with(mem.value.used));
  const bool statics = d.last_static_ns < 0 || now.monotonic_ns - d.last_static_ns >= opt_.static_interval_ns;
  if (statics) {
    d.last_static_ns = now.monotonic_ns;
    put(out, MetricId::kGpuMemoryTotalBytes, e, mem.with(mem.value.total));
    put(out, MetricId::kGpuPowerLimitW, e, dev.enforced_power_limit_mw(), 1e-3);
    put(out, MetricId::kGpuPcieLinkGenMax, e, dev.max_pcie_link_generation());
    put(out, MetricId::kGpuPcieLinkWidthMax, e, dev.max_pcie_link_width());
  }
  put(out, MetricId::kGpuPowerW, e, dev.power_usage_mw(), 1e-3);
  put(out, MetricId::kGpuSmClockMhz, e, dev.clock_mhz(nvml::Clock::kSm));
  put(out, MetricId::kGpuMemClockMhz, e, dev.clock_mhz(nvml::Clock::kMem));
  put(out, MetricId::kGpuClockEventReasons, e, dev.clocks_event_reasons());
  put(out, MetricId::kGpuTemperatureC, e, dev.temperature_c());
  put(out, MetricId::kGpuPcieLinkGen, e, dev.pcie_link_generation());
  put(out, MetricId::kGpuPcieLinkWidth, e, dev.pcie_link_width());
  if (!d.gpm && (d.last_pcie_ns < 0 || now.monotonic_ns - d.last_pcie_ns >= opt_.classic_pcie_interval_ns)) {
    d.last_pcie_ns = now.monotonic_ns;
    put(out, MetricId::kGpuPcieRxBytesPerS, e, dev.pcie_throughput_kbps(nvml::PcieDirection::kRx), 1024.0);
    put(out, MetricId::kGpuPcieTxBytesPerS, e, dev.pcie_throughput_kbps(nvml::PcieDirection::kTx), 1024.0);
  }
}

void GpuSampler::sample_gpm(Dev& d, const samples::TickTime& now, Tick& out) {
  const Entity e = Entity::gpu(d.device.index());
  if (!d.gpm) {
    // Say "not available" for the activity metrics on every tick, not just once.
    for (const GpmMap& g : kGpm) {
      if (g.metric != MetricId::kGpuPcieRxBytesPerS && g.metric != MetricId::kGpuPcieTxBytesPerS)
        out.add_invalid(g.metric, e);
    }
    return;
  }
  if (d.last_gpm_ns >= 0 && now.monotonic_ns - d.last_gpm_ns < opt_.gpm_interval_ns) return;
  const int slot = d.newest < 0 ? 0 : 1 - d.newest;
  if (d.device.gpm_sample(d.snaps[slot]) != 0) {
    for (const GpmMap& g : kGpm) out.add_invalid(g.metric, e);
    return;
  }
  d.last_gpm_ns = now.monotonic_ns;
  const int older = d.newest;
  d.newest = slot;
  if (older < 0) return;  // one snapshot: metrics need the next one
  std::array<unsigned, kGpm.size()> ids{};
  for (size_t i = 0; i < kGpm.size(); ++i) ids[i] = kGpm[i].id;
  const auto metrics = nvml_.gpm_metrics(d.snaps[older], d.snaps[slot], ids);
  for (size_t i = 0; i < kGpm.size(); ++i) {
    if (metrics.valid && i < metrics.value.size()) {
      // A NaN is outside every range too (!(x >= 0)).
      const auto& v = metrics.value[i].value;
      const bool in_range = !v.valid || (v.value >= 0.0 && v.value <= kGpm[i].max);
      put(out, kGpm[i].metric, e, in_range ? v : nvml::Value<double>::fail(nvml::kOutOfRange), kGpm[i].scale);
    } else {
      out.add_invalid(kGpm[i].metric, e);
    }
  }
}

std::vector<samples::GpuMeta> GpuSampler::describe() const {
  std::vector<samples::GpuMeta> out;
  for (const Dev& d : devices_) {
    samples::GpuMeta g;
    g.index = d.device.index();
    g.name = d.device.name().value_or("");
    g.uuid = d.device.uuid().value_or("");
    const auto pci = d.device.pci_info();
    if (pci.valid) g.bus_id = pci.value.bus_id;
    if (auto v = d.device.max_pcie_link_generation(); v.valid) g.max_link_gen = v.value;
    if (auto v = d.device.max_pcie_link_width(); v.valid) g.max_link_width = v.value;
    if (auto v = d.device.cpu_affinity(); v.valid) g.local_cpus = v.value;
    if (auto v = d.device.numa_node_id(); v.valid) g.numa_node = static_cast<int>(v.value);
    // SM count: the NVML wrapper has no multiprocessor count; machine/ fills it from the
    // device name or CUDA where known.
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<std::vector<int64_t>> GpuSampler::compute_pids() const {
  std::vector<std::vector<int64_t>> out;
  for (const Dev& d : devices_) {
    std::vector<int64_t> pids;
    if (const auto procs = d.device.compute_processes(); procs.valid) {
      for (const auto& p : procs.value) pids.push_back(p.pid);
    }
    out.push_back(std::move(pids));
  }
  return out;
}

}  // namespace chokepoint::sampler::gpu
