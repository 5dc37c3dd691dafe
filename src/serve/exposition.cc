#include "serve/exposition.h"

#include <string>

#include "exporters/prometheus_text.h"
#include "rules/finding.h"

namespace chokepoint::serve {
namespace {

using exporters::PromLabel;
using exporters::PromType;
using exporters::PromWriter;
using samples::MetricId;

constexpr double kPct = 0.01;  // % -> ratio
constexpr double kMiB = 1.0 / (1024.0 * 1024.0);

struct Mapped {
  MetricId metric;
  std::string_view name;
  double scale;
  std::string_view help;
};

// dcgm-exporter's names (and units) for what the NVML/GPM sampler reads. DCGM's profiling
// fields (DCGM_FI_PROF_*) are ratios 0..1; GPM gives percents.
constexpr Mapped kGpu[] = {
    {MetricId::kGpuUtilization, "DCGM_FI_DEV_GPU_UTIL", 1,
     "GPU utilization (in %): share of time any kernel or copy ran (nvidia-smi GPU-Util), not SM activity."},
    {MetricId::kGpuMemoryUtilization, "DCGM_FI_DEV_MEM_COPY_UTIL", 1,
     "Memory utilization (in %): share of time device memory was read or written."},
    {MetricId::kGpuGrEngineActive, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", kPct,
     "Ratio of time the graphics/compute engine is active (NVML GPM)."},
    {MetricId::kGpuSmActive, "DCGM_FI_PROF_SM_ACTIVE", kPct,
     "Ratio of cycles an SM has at least one warp assigned, averaged over all SMs (NVML GPM)."},
    {MetricId::kGpuSmOccupancy, "DCGM_FI_PROF_SM_OCCUPANCY", kPct,
     "Ratio of resident warps to the maximum, averaged over all SMs (NVML GPM)."},
    {MetricId::kGpuTensorActive, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", kPct,
     "Ratio of cycles any tensor pipe is active (NVML GPM)."},
    {MetricId::kGpuDramActive, "DCGM_FI_PROF_DRAM_ACTIVE", kPct,
     "Ratio of cycles the device memory interface is active (NVML GPM DRAM bandwidth utilization)."},
    {MetricId::kGpuPcieTxBytesPerS, "DCGM_FI_PROF_PCIE_TX_BYTES", 1,
     "PCIe bytes per second from the GPU to the host (NVML GPM, else NVML PCIe throughput)."},
    {MetricId::kGpuPcieRxBytesPerS, "DCGM_FI_PROF_PCIE_RX_BYTES", 1,
     "PCIe bytes per second from the host to the GPU (NVML GPM, else NVML PCIe throughput)."},
    {MetricId::kGpuMemoryUsedBytes, "DCGM_FI_DEV_FB_USED", kMiB, "Framebuffer memory used (in MiB)."},
    {MetricId::kGpuPowerW, "DCGM_FI_DEV_POWER_USAGE", 1, "Power draw (in W)."},
    {MetricId::kGpuPowerLimitW, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 1, "Enforced power limit (in W)."},
    {MetricId::kGpuSmClockMhz, "DCGM_FI_DEV_SM_CLOCK", 1, "SM clock frequency (in MHz)."},
    {MetricId::kGpuMemClockMhz, "DCGM_FI_DEV_MEM_CLOCK", 1, "Memory clock frequency (in MHz)."},
    {MetricId::kGpuTemperatureC, "DCGM_FI_DEV_GPU_TEMP", 1, "GPU temperature (in C)."},
    {MetricId::kGpuClockEventReasons, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 1,
     "Why clocks are held down, NVML clock event reason bits (0x4 software power cap, 0x8 hardware "
     "slowdown, 0x20/0x40 thermal)."},
    {MetricId::kGpuPcieLinkGen, "DCGM_FI_DEV_PCIE_LINK_GEN", 1, "Current PCIe link generation (drops at idle)."},
    {MetricId::kGpuPcieLinkWidth, "DCGM_FI_DEV_PCIE_LINK_WIDTH", 1, "Current PCIe link width (lanes)."},
    {MetricId::kGpuPcieLinkGenMax, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", 1,
     "Best PCIe link generation of the GPU and its slot."},
    {MetricId::kGpuPcieLinkWidthMax, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", 1, "Maximum PCIe link width (lanes)."},
};

struct Host {
  MetricId metric;
  std::string_view name;
  double scale;
  std::string_view help;
};
constexpr Host kHost[] = {
    {MetricId::kHostProcsRunning, "chokepoint_host_procs_running", 1, "Runnable tasks (the run queue)."},
    {MetricId::kHostProcsBlocked, "chokepoint_host_procs_blocked", 1,
     "Tasks in uninterruptible sleep (mostly waiting for I/O)."},
    {MetricId::kHostCtxSwitchesPerS, "chokepoint_host_context_switches_per_second", 1,
     "Context switches per second, all CPUs."},
    {MetricId::kHostSwapInPagesPerS, "chokepoint_host_swap_in_pages_per_second", 1, "Pages swapped in per second."},
    {MetricId::kHostSwapOutPagesPerS, "chokepoint_host_swap_out_pages_per_second", 1, "Pages swapped out per second."},
    {MetricId::kHostMajorFaultsPerS, "chokepoint_host_major_faults_per_second", 1,
     "Page faults that needed I/O, per second."},
    {MetricId::kHostDiskReadBytesPerS, "chokepoint_host_disk_read_bytes_per_second", 1,
     "Bytes read from whole disks per second."},
    {MetricId::kHostDiskWriteBytesPerS, "chokepoint_host_disk_write_bytes_per_second", 1,
     "Bytes written to whole disks per second."},
    {MetricId::kHostMemAvailableBytes, "chokepoint_host_memory_available_bytes", 1, "MemAvailable of /proc/meminfo."},
};

struct CpuMode {
  MetricId metric;
  std::string_view mode;
};
constexpr CpuMode kCpuModes[] = {{MetricId::kHostCpuUserPct, "user"},
                                 {MetricId::kHostCpuSystemPct, "system"},
                                 {MetricId::kHostCpuIowaitPct, "iowait"},
                                 {MetricId::kHostCpuStealPct, "steal"},
                                 {MetricId::kHostCpuIdlePct, "idle"}};

struct Pressure {
  MetricId metric;
  std::string_view resource, kind;
};
constexpr Pressure kPressure[] = {{MetricId::kHostPsiCpuSomePct, "cpu", "some"},
                                  {MetricId::kHostPsiMemorySomePct, "memory", "some"},
                                  {MetricId::kHostPsiMemoryFullPct, "memory", "full"},
                                  {MetricId::kHostPsiIoSomePct, "io", "some"}};

struct Proc {
  MetricId metric;
  std::string_view name;
  double scale;
  std::string_view help;
};
constexpr Proc kProc[] = {
    {MetricId::kProcCpuPct, "chokepoint_process_cpu_cores", kPct, "CPU used by the process, in cores (1 = one core)."},
    {MetricId::kProcRssBytes, "chokepoint_process_resident_memory_bytes", 1, "Resident set size."},
    {MetricId::kProcThreads, "chokepoint_process_threads", 1, "Threads of the process."},
    {MetricId::kProcReadBytesPerS, "chokepoint_process_read_bytes_per_second", 1,
     "Bytes the process read from storage per second (/proc/PID/io)."},
    {MetricId::kProcWriteBytesPerS, "chokepoint_process_write_bytes_per_second", 1,
     "Bytes the process wrote to storage per second."},
    {MetricId::kProcCtxInvoluntaryPerS, "chokepoint_process_involuntary_context_switches_per_second", 1,
     "Preemptions per second, summed over the threads visited."},
    {MetricId::kProcRunqWaitNsPerS, "chokepoint_process_runqueue_wait_ratio", 1e-9,
     "Seconds per second the threads waited on a run queue, summed over the threads visited."},
};

struct Named {
  std::string_view name;
  PromType type;
  std::string_view help;
};
constexpr Named kOther[] = {
    {"chokepoint_serve_info", PromType::kGauge, "The exporter: version (value 1)."},
    {"chokepoint_gpu_available", PromType::kGauge, "1 when NVML loaded and sees at least one GPU, else 0."},
    {"chokepoint_gpu_unavailable_info", PromType::kGauge, "Why there are no GPU metrics (value 1)."},
    {"chokepoint_gpus", PromType::kGauge, "GPUs sampled."},
    {"chokepoint_host_cpus", PromType::kGauge, "CPUs online."},
    {"chokepoint_host_memory_total_bytes", PromType::kGauge, "Physical memory of the host."},
    {"chokepoint_host_cpu_ratio", PromType::kGauge,
     "Share of all CPUs' time in each mode over the last interval (user includes nice; system irq and softirq)."},
    {"chokepoint_host_pressure_ratio", PromType::kGauge,
     "PSI: share of the last interval some (or all) tasks stalled on the resource."},
    {"chokepoint_job_info", PromType::kGauge, "A job followed on this node: its root process and command (value 1)."},
    {"chokepoint_job_gpu", PromType::kGauge, "1 for each GPU a job's processes run on (join with DCGM_FI_* on gpu)."},
    {"chokepoint_job_cpu_cores", PromType::kGauge, "CPU used by the job's process tree, in cores."},
    {"chokepoint_job_processes", PromType::kGauge, "Live processes in the job's tree."},
    {"chokepoint_job_bound", PromType::kGauge,
     "1 for the bottleneck category the live diagnosis names for the job over its window, 0 for the others."},
    {"chokepoint_job_bound_confidence_ratio", PromType::kGauge, "Confidence of the job's verdict, 0..1."},
    {"chokepoint_job_finding_active", PromType::kGauge,
     "1 for each finding the live diagnosis reports for the job over its window (by id, category, severity)."},
    {"chokepoint_job_finding_estimated_speedup_ratio", PromType::kGauge,
     "Whole-step speedup the finding's remedy (the remedy label) is expected to give (1.3 = 30% faster), when "
     "estimated."},
    {"chokepoint_job_diagnosis_window_seconds", PromType::kGauge, "Length of the window the last diagnosis covered."},
    {"chokepoint_findings_active", PromType::kGauge, "Active findings on this node, by id and severity."},
    {"chokepoint_process_gpu_memory_bytes", PromType::kGauge, "Device memory the process holds (NVML)."},
    {"chokepoint_serve_ticks_total", PromType::kCounter, "Sampling ticks since the exporter started."},
    {"chokepoint_serve_diagnoses_total", PromType::kCounter, "Job diagnoses run since the exporter started."},
    {"chokepoint_serve_jobs_started_total", PromType::kCounter, "Jobs followed since the exporter started."},
    {"chokepoint_serve_jobs_dropped_total", PromType::kCounter, "Jobs seen but not followed (over --max-jobs)."},
    {"chokepoint_serve_processes_not_shown", PromType::kGauge,
     "Processes of a job left out of the process series (over the per-job cap)."},
    {"chokepoint_serve_tick_seconds", PromType::kGauge, "Wall time the last sampling tick took."},
    {"chokepoint_serve_diagnosis_seconds", PromType::kGauge, "Wall time the last round of job diagnoses took."},
    {"chokepoint_serve_interval_seconds", PromType::kGauge, "Sampling period."},
    {"chokepoint_serve_last_tick_timestamp_seconds", PromType::kGauge, "Unix time of the latest sample."},
    {"chokepoint_serve_scrapes_total", PromType::kCounter, "Scrapes of /metrics answered."},
    {"chokepoint_serve_scrape_errors_total", PromType::kCounter, "Scrapes the client cut off mid-response."},
};

constexpr rules::Category kCategories[] = {
    rules::Category::kInput,   rules::Category::kHost,   rules::Category::kSync,          rules::Category::kTransfer,
    rules::Category::kCompute, rules::Category::kMemory, rules::Category::kCommunication, rules::Category::kIo,
    rules::Category::kIdle,    rules::Category::kUnknown};

void declare_all(PromWriter& w) {
  for (const Named& n : kOther) w.family(n.name, n.type, n.help);
  for (const Mapped& m : kGpu) w.family(m.name, PromType::kGauge, m.help);
  w.family("DCGM_FI_DEV_FB_FREE", PromType::kGauge, "Framebuffer memory free (in MiB).");
  w.family("DCGM_FI_DEV_FB_TOTAL", PromType::kGauge, "Framebuffer memory total (in MiB).");
  for (const Host& h : kHost) w.family(h.name, PromType::kGauge, h.help);
  for (const Proc& p : kProc) w.family(p.name, PromType::kGauge, p.help);
}

void write_gpus(PromWriter& w, const NodeSnapshot& n) {
  for (const GpuSnapshot& g : n.gpus) {
    const std::string index = std::to_string(g.meta.index);
    const std::string device = "nvidia" + index;
    const std::vector<PromLabel> labels = {
        {"gpu", index},     {"UUID", g.meta.uuid},      {"pci_bus_id", g.meta.bus_id},
        {"device", device}, {"modelName", g.meta.name}, {"Hostname", n.hostname}};
    for (const Mapped& m : kGpu) {
      if (auto it = g.values.find(m.metric); it != g.values.end()) w.sample(m.name, labels, it->second * m.scale);
    }
    const auto used = g.values.find(MetricId::kGpuMemoryUsedBytes);
    const auto total = g.values.find(MetricId::kGpuMemoryTotalBytes);
    if (total != g.values.end()) {
      w.sample("DCGM_FI_DEV_FB_TOTAL", labels, total->second * kMiB);
      if (used != g.values.end()) w.sample("DCGM_FI_DEV_FB_FREE", labels, (total->second - used->second) * kMiB);
    }
  }
}

void write_host(PromWriter& w, const NodeSnapshot& n) {
  const std::vector<PromLabel> node = {{"Hostname", n.hostname}};
  if (n.host_cpus > 0) w.sample("chokepoint_host_cpus", node, n.host_cpus);
  if (n.host_mem_total_bytes) w.sample("chokepoint_host_memory_total_bytes", node, *n.host_mem_total_bytes);
  for (const Host& h : kHost) {
    if (auto it = n.host.find(h.metric); it != n.host.end()) w.sample(h.name, node, it->second * h.scale);
  }
  for (const CpuMode& c : kCpuModes) {
    if (auto it = n.host.find(c.metric); it != n.host.end()) {
      w.sample("chokepoint_host_cpu_ratio", {{"Hostname", n.hostname}, {"mode", c.mode}}, it->second * kPct);
    }
  }
  for (const Pressure& p : kPressure) {
    if (auto it = n.host.find(p.metric); it != n.host.end()) {
      w.sample("chokepoint_host_pressure_ratio", {{"Hostname", n.hostname}, {"resource", p.resource}, {"kind", p.kind}},
               it->second * kPct);
    }
  }
}

void write_job(PromWriter& w, const NodeSnapshot& n, const JobSnapshot& j,
               std::map<std::pair<std::string, std::string>, int>& active) {
  const std::string pid = std::to_string(j.pid);
  const std::string rank = j.rank ? std::to_string(*j.rank) : std::string();
  const std::vector<PromLabel> job = {{"Hostname", n.hostname}, {"job_pid", pid}, {"job_name", j.name}};
  w.sample("chokepoint_job_info",
           {{"Hostname", n.hostname}, {"job_pid", pid}, {"job_name", j.name}, {"rank", rank}, {"command", j.command}},
           1);
  for (unsigned g : j.gpus) {
    w.sample("chokepoint_job_gpu",
             {{"Hostname", n.hostname}, {"job_pid", pid}, {"job_name", j.name}, {"gpu", std::to_string(g)}}, 1);
  }
  double cpu = 0;
  for (const ProcessSnapshot& p : j.processes) {
    if (auto it = p.values.find(MetricId::kProcCpuPct); it != p.values.end()) cpu += it->second * kPct;
  }
  w.sample("chokepoint_job_cpu_cores", job, cpu);
  w.sample("chokepoint_job_processes", job, static_cast<double>(j.processes.size() + j.processes_not_shown));
  if (j.processes_not_shown > 0) {
    w.sample("chokepoint_serve_processes_not_shown", job, static_cast<double>(j.processes_not_shown));
  }
  if (j.diagnosed) {
    for (rules::Category c : kCategories) {
      const std::string_view name = rules::category_name(c);
      w.sample("chokepoint_job_bound",
               {{"Hostname", n.hostname}, {"job_pid", pid}, {"job_name", j.name}, {"category", name}},
               name == j.bound ? 1 : 0);
    }
    w.sample("chokepoint_job_bound_confidence_ratio", job, j.confidence);
    w.sample("chokepoint_job_diagnosis_window_seconds", job, j.window_s);
    for (const FindingSnapshot& f : j.findings) {
      const std::vector<PromLabel> fl = {{"Hostname", n.hostname}, {"job_pid", pid},         {"job_name", j.name},
                                         {"finding", f.id},        {"category", f.category}, {"severity", f.severity}};
      if (w.sample("chokepoint_job_finding_active", fl, 1)) ++active[{f.id, f.severity}];
      if (f.estimated_speedup) {
        w.sample(
            "chokepoint_job_finding_estimated_speedup_ratio",
            {{"Hostname", n.hostname}, {"job_pid", pid}, {"job_name", j.name}, {"finding", f.id}, {"remedy", f.remedy}},
            *f.estimated_speedup);
      }
    }
  }
  for (const ProcessSnapshot& p : j.processes) {
    const std::string ppid = std::to_string(p.pid);
    const std::vector<PromLabel> pl = {{"Hostname", n.hostname},
                                       {"job_pid", pid},
                                       {"pid", ppid},
                                       {"comm", p.comm},
                                       {"role", samples::role_name(p.role)}};
    for (const Proc& m : kProc) {
      if (auto it = p.values.find(m.metric); it != p.values.end()) w.sample(m.name, pl, it->second * m.scale);
    }
    if (p.gpu_memory_bytes) {
      w.sample("chokepoint_process_gpu_memory_bytes", pl, static_cast<double>(*p.gpu_memory_bytes));
    }
  }
}

}  // namespace

std::string render_exposition(const NodeSnapshot& n, const ServerCounters& c) {
  PromWriter w;
  declare_all(w);
  const std::vector<PromLabel> node = {{"Hostname", n.hostname}};
  w.sample("chokepoint_serve_info", {{"Hostname", n.hostname}, {"version", n.version}}, 1);
  w.sample("chokepoint_gpu_available", node, n.gpus.empty() ? 0 : 1);
  if (n.gpus.empty()) {
    w.sample("chokepoint_gpu_unavailable_info", {{"Hostname", n.hostname}, {"reason", n.gpu_unavailable}}, 1);
  }
  w.sample("chokepoint_gpus", node, static_cast<double>(n.gpus.size()));
  write_gpus(w, n);
  write_host(w, n);
  std::map<std::pair<std::string, std::string>, int> active;
  for (const JobSnapshot& j : n.jobs) write_job(w, n, j, active);
  for (const auto& [key, count] : active) {
    w.sample("chokepoint_findings_active", {{"Hostname", n.hostname}, {"finding", key.first}, {"severity", key.second}},
             count);
  }
  w.sample("chokepoint_serve_ticks_total", node, static_cast<double>(n.ticks));
  w.sample("chokepoint_serve_diagnoses_total", node, static_cast<double>(n.diagnoses));
  w.sample("chokepoint_serve_jobs_started_total", node, static_cast<double>(n.jobs_started));
  w.sample("chokepoint_serve_jobs_dropped_total", node, static_cast<double>(n.jobs_dropped));
  w.sample("chokepoint_serve_tick_seconds", node, n.tick_seconds);
  w.sample("chokepoint_serve_diagnosis_seconds", node, n.diagnosis_seconds);
  w.sample("chokepoint_serve_interval_seconds", node, n.interval_s);
  if (n.time_ns > 0) {
    w.sample("chokepoint_serve_last_tick_timestamp_seconds", node, static_cast<double>(n.time_ns) / 1e9);
  }
  w.sample("chokepoint_serve_scrapes_total", node, static_cast<double>(c.scrapes));
  w.sample("chokepoint_serve_scrape_errors_total", node, static_cast<double>(c.scrape_errors));
  return w.text();
}

std::vector<std::string_view> exposition_family_names() {
  std::vector<std::string_view> out;
  for (const Named& n : kOther) out.push_back(n.name);
  for (const Mapped& m : kGpu) out.push_back(m.name);
  out.push_back("DCGM_FI_DEV_FB_FREE");
  out.push_back("DCGM_FI_DEV_FB_TOTAL");
  for (const Host& h : kHost) out.push_back(h.name);
  for (const Proc& p : kProc) out.push_back(p.name);
  return out;
}

std::vector<std::string_view> bound_categories() {
  std::vector<std::string_view> out;
  for (rules::Category c : kCategories) out.emplace_back(rules::category_name(c));
  return out;
}

}  // namespace chokepoint::serve
