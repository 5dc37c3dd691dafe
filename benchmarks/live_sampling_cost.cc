// What live sampling costs and what it reads, on a real machine: samples the GPUs (NVML,
// classic metrics + GPM) and the host (/proc) every INTERVAL_MS for SECONDS, then prints
// the CPU time this process spent per tick and as a share of one core, and the last
// tick's values with their validity. Run it on a GPU machine beside a workload.
//
//   build-perf/benchmarks/live_sampling_cost [SECONDS=10] [INTERVAL_MS=100] [PID]
//   build-perf/benchmarks/live_sampling_cost calls      # CPU and wall time of each NVML call
// With PID, that process and its children are sampled too (as `run` will).
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "sampler/gpu/gpu_sampler.h"
#include "sampler/proc/host_sampler.h"
#include "sampler/proc/proc_fs.h"
#include "sampler/proc/process_sampler.h"
#include "samples/clock.h"
#include "samples/metric.h"

using namespace chokepoint;

namespace {

// Times each NVML reading the GPU sampler makes, 50 times on GPU 0.
int time_calls(const nvml::Nvml& nv) {
  const auto first = nv.device(0);
  if (!first.valid) {
    std::printf("no GPU 0: %s\n", nv.error_string(first.error).c_str());
    return 1;
  }
  const nvml::Device& dev = first.value;
  auto measure = [&](const char* name, auto&& call) {
    constexpr int kRuns = 50;
    const int64_t c0 = samples::clock_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = samples::clock_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < kRuns; ++i) call();
    const double cpu_us = static_cast<double>(samples::clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / 1e3 / kRuns;
    const double wall_us = static_cast<double>(samples::clock_ns(CLOCK_MONOTONIC) - w0) / 1e3 / kRuns;
    std::printf("  %-28s cpu %8.1f us  wall %8.1f us\n", name, cpu_us, wall_us);
  };
  measure("utilization", [&] { return dev.utilization(); });
  measure("memory_info", [&] { return dev.memory_info(); });
  measure("power_usage_mw", [&] { return dev.power_usage_mw(); });
  measure("enforced_power_limit_mw", [&] { return dev.enforced_power_limit_mw(); });
  measure("clock_mhz(sm)", [&] { return dev.clock_mhz(nvml::Clock::kSm); });
  measure("clock_mhz(mem)", [&] { return dev.clock_mhz(nvml::Clock::kMem); });
  measure("clocks_event_reasons", [&] { return dev.clocks_event_reasons(); });
  measure("temperature_c", [&] { return dev.temperature_c(); });
  measure("pcie_link_generation", [&] { return dev.pcie_link_generation(); });
  measure("max_pcie_link_generation", [&] { return dev.max_pcie_link_generation(); });
  measure("pcie_link_width", [&] { return dev.pcie_link_width(); });
  measure("max_pcie_link_width", [&] { return dev.max_pcie_link_width(); });
  measure("compute_processes", [&] { return dev.compute_processes(); });
  nvml::GpmSample a, b;
  measure("gpm_sample", [&] { return dev.gpm_sample(a); });
  usleep(100'000);
  dev.gpm_sample(b);
  const std::vector<unsigned> ids = {1, 2, 3, 5, 10, 20, 21};
  measure("gpm_metrics (7 metrics)", [&] { return nv.gpm_metrics(a, b, ids); });
  const std::vector<unsigned> one = {2};
  measure("gpm_metrics (1 metric)", [&] { return nv.gpm_metrics(a, b, one); });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "calls") {
    auto nv = nvml::Nvml::open();
    if (!nv.ok()) {
      std::printf("NVML unavailable: %s\n", nv.status().message().c_str());
      return 1;
    }
    return time_calls(*nv.value());
  }
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  const int64_t interval_ns = (argc > 2 ? std::atoll(argv[2]) : 100) * 1'000'000;

  auto nvml = nvml::Nvml::open();
  std::unique_ptr<sampler::gpu::GpuSampler> gpu;
  if (nvml.ok()) {
    gpu = std::make_unique<sampler::gpu::GpuSampler>(*nvml.value());
    std::printf("NVML: %zu GPU(s)\n", gpu->device_count());
  } else {
    std::printf("NVML unavailable: %s (host only)\n", nvml.status().message().c_str());
  }
  auto fs = sampler::proc::ProcFs::live();
  sampler::proc::HostSampler host(fs);
  std::unique_ptr<sampler::proc::ProcessSampler> procs;
  if (argc > 3) {
    procs = std::make_unique<sampler::proc::ProcessSampler>(fs,
                                                            sampler::proc::live_process_options({std::atoll(argv[3])}));
  }

  samples::Tick last;
  int ticks = 0;
  const int64_t cpu0 = samples::clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  const int64_t start = samples::clock_ns(CLOCK_MONOTONIC);
  int64_t next = start;
  while (samples::clock_ns(CLOCK_MONOTONIC) - start < static_cast<int64_t>(seconds * 1e9)) {
    const samples::TickTime now = samples::now();
    samples::Tick tick;
    tick.time_ns = now.realtime_ns;
    if (gpu) gpu->sample(now, tick);
    host.sample(now, tick);
    if (procs) procs->sample(now, tick);
    last = std::move(tick);
    ++ticks;
    next += interval_ns;
    const int64_t wait = next - samples::clock_ns(CLOCK_MONOTONIC);
    if (wait > 0) {
      timespec ts{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
      nanosleep(&ts, nullptr);
    }
  }
  const double cpu_s = static_cast<double>(samples::clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / 1e9;
  const double wall_s = static_cast<double>(samples::clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
  std::printf("%d ticks in %.2f s: CPU %.3f s = %.0f us per tick = %.2f%% of one core\n", ticks, wall_s, cpu_s,
              cpu_s / ticks * 1e6, 100.0 * cpu_s / wall_s);
  std::printf("last tick, %zu samples:\n", last.samples.size());
  for (const auto& s : last.samples) {
    const auto& info = samples::metric_info(s.metric);
    if (s.valid) {
      std::printf("  %-8s %-28s %14.3f %s\n", samples::format_entity(s.entity).c_str(), std::string(info.name).c_str(),
                  s.value, std::string(info.unit).c_str());
    } else {
      std::printf("  %-8s %-28s        invalid\n", samples::format_entity(s.entity).c_str(),
                  std::string(info.name).c_str());
    }
  }
  return 0;
}
