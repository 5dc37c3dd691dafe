#include "serve/node_sampler.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "analyses/sampled/live_analysis.h"
#include "base/severity.h"
#include "base/version.h"
#include "live/session.h"
#include "rules/diagnose.h"
#include "sampler/proc/proc_parsers.h"
#include "sampler/proc/roles.h"
#include "samples/recording_reader.h"

namespace chokepoint::serve {
namespace {

using samples::EntityKind;
using samples::MetricId;

double seconds_since(int64_t mono_ns) {
  return static_cast<double>(samples::clock_ns(CLOCK_MONOTONIC) - mono_ns) / 1e9;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void trim_window(std::deque<samples::Tick>& ticks, int64_t oldest_ns) {
  while (!ticks.empty() && ticks.front().time_ns < oldest_ns) ticks.pop_front();
}

}  // namespace

std::string job_name(const std::vector<std::string>& argv, const std::string& comm) {
  if (argv.empty()) return comm;
  if (sampler::proc::is_python(argv)) {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if ((a == "-m" || a == "-c") && i + 1 < argv.size()) return a == "-m" ? argv[i + 1] : std::string("-c");
      if (!a.empty() && a[0] != '-') return base_name(a);
    }
  }
  return base_name(argv[0]);
}

std::unique_ptr<NodeSampler> NodeSampler::start(const NodeOptions& options) {
  std::unique_ptr<NodeSampler> n(new NodeSampler());
  n->opt_ = options;
  const auto facts = live::host_facts();
  if (auto it = facts.find("hostname"); it != facts.end()) n->base_.hostname = it->second;
  if (auto it = facts.find("cpus"); it != facts.end()) n->base_.host_cpus = std::stoi(it->second);
  if (auto it = facts.find("mem_total_bytes"); it != facts.end()) {
    n->base_.host_mem_total_bytes = std::stod(it->second);
  }
  n->base_.version = CHOKEPOINT_VERSION;
  n->base_.interval_s = static_cast<double>(options.interval_ns) / 1e9;
  n->base_.window_s = static_cast<double>(options.window_ns) / 1e9;

  if (options.gpu) {
    auto nv = nvml::Nvml::open();
    if (!nv.ok()) {
      n->base_.gpu_unavailable = nv.status().message();
    } else {
      n->nvml_ = std::move(nv.value());
      if (auto v = n->nvml_->driver_version(); v.valid) n->base_.driver_version = v.value;
      sampler::gpu::GpuSamplerOptions go;
      go.gpm_interval_ns = std::max<int64_t>(options.interval_ns, 100'000'000);  // NVML's floor
      n->gpus_ = std::make_unique<sampler::gpu::GpuSampler>(*n->nvml_, go);
      n->gpu_meta_ = n->gpus_->describe();
      if (n->gpus_->device_count() == 0) {
        n->base_.gpu_unavailable = "NVML loaded but sees no GPU";
        for (const std::string& why : n->gpus_->skipped()) n->base_.gpu_unavailable += "; " + why;
        n->gpus_.reset();
      }
    }
  } else {
    n->base_.gpu_unavailable = "GPU sampling turned off (--no-gpu)";
  }
  n->fs_ = std::make_unique<sampler::proc::ProcFs>(
      options.proc_root.empty() ? sampler::proc::ProcFs::live() : sampler::proc::ProcFs::fixture(options.proc_root));
  n->host_ = std::make_unique<sampler::proc::HostSampler>(*n->fs_);
  std::set<int64_t> named;
  for (int64_t pid : options.pids) {
    if (named.insert(pid).second) n->add_job(pid, true);  // --pid 5 --pid 5: one job
  }
  return n;
}

NodeSampler::~NodeSampler() = default;

std::unique_ptr<sampler::proc::ProcessSampler> NodeSampler::make_process_sampler(int64_t root) const {
  sampler::proc::ProcessSamplerOptions po = sampler::proc::live_process_options({root});
  po.exclude.push_back(getpid());
  return std::make_unique<sampler::proc::ProcessSampler>(*fs_, std::move(po));
}

void NodeSampler::add_job(int64_t root, bool named) {
  auto j = std::make_unique<Job>();
  j->root = root;
  j->named = named;
  j->procs = make_process_sampler(root);
  jobs_.push_back(std::move(j));
  ++jobs_started_;
}

void NodeSampler::sample_gpu_processes() {
  gpu_pids_.clear();
  gpu_pid_memory_.clear();
  if (!gpus_) return;
  for (const samples::GpuMeta& g : gpu_meta_) {
    const auto dev = nvml_->device(g.index);
    if (!dev.valid) continue;
    const auto procs = dev.value.compute_processes();
    if (!procs.valid) continue;
    for (const nvml::ProcessInfo& p : procs.value) {
      gpu_pids_[p.pid].insert(g.index);
      if (p.used_bytes) gpu_pid_memory_[p.pid] += *p.used_bytes;
    }
  }
}

// The torchrun agent above a rank, else the process itself; 0 when it is not visible here
// (another PID namespace).
int64_t NodeSampler::job_root_of(int64_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  if (fs_->read(dir + "/stat", buf_) != 0) return 0;
  const auto st = sampler::proc::parse_task_stat(buf_);
  if (!st) return 0;
  if (st->ppid > 1 && fs_->read("/proc/" + std::to_string(st->ppid) + "/cmdline", buf_) == 0 &&
      sampler::proc::is_torchrun_agent(sampler::proc::parse_cmdline(buf_))) {
    return st->ppid;
  }
  return pid;
}

void NodeSampler::discover_jobs() {
  std::set<int64_t> followed;
  for (const auto& j : jobs_) {
    followed.insert(j->root);
    for (int64_t p : j->procs->live_pids()) followed.insert(p);
  }
  for (const auto& [pid, gpus] : gpu_pids_) {
    if (followed.count(pid) != 0 || pid == getpid()) continue;
    const int64_t root = job_root_of(pid);
    if (root == 0 || followed.count(root) != 0) continue;
    if (jobs_.size() >= opt_.max_jobs) {
      if (dropped_roots_.insert(root).second) ++jobs_dropped_;
      if (dropped_roots_.size() > 4096) dropped_roots_.clear();
      continue;
    }
    add_job(root, false);
    followed.insert(root);
  }
}

void NodeSampler::tick(const samples::TickTime& now) {
  const int64_t t0 = samples::clock_ns(CLOCK_MONOTONIC);
  samples::Tick node;
  node.time_ns = now.realtime_ns;
  host_->sample(now, node);
  if (gpus_) gpus_->sample(now, node);
  for (const samples::Sample& s : node.samples) {
    const auto key = std::make_pair(s.metric, s.entity);
    if (s.valid) {
      node_latest_[key] = s.value;
    } else {
      node_latest_.erase(key);
    }
  }
  const int64_t oldest = now.realtime_ns - opt_.window_ns;
  node_ticks_.push_back(std::move(node));
  trim_window(node_ticks_, oldest);

  sample_gpu_processes();
  discover_jobs();
  for (auto& j : jobs_) {
    samples::Tick t;
    t.time_ns = now.realtime_ns;
    j->procs->sample(now, t);
    if (j->procs->processes().size() > opt_.max_processes_seen) {
      j->procs = make_process_sampler(j->root);  // forget the exited ones (bounded memory)
    }
    const std::vector<int64_t> live = j->procs->live_pids();
    std::map<int64_t, Readings> latest;
    j->gpus.clear();
    for (int64_t p : live) {
      latest[p] = std::move(j->latest[p]);
      if (auto it = gpu_pids_.find(p); it != gpu_pids_.end()) j->gpus.insert(it->second.begin(), it->second.end());
    }
    for (const samples::Sample& s : t.samples) {
      if (s.entity.kind != EntityKind::kProcess) continue;
      auto it = latest.find(s.entity.id);
      if (it == latest.end()) continue;
      if (s.valid) {
        it->second[s.metric] = s.value;
      } else {
        it->second.erase(s.metric);
      }
    }
    j->latest = std::move(latest);
    j->ticks.push_back(std::move(t));
    trim_window(j->ticks, oldest);
  }
  // Jobs whose tree has exited leave (a --pid job too: its PID may be reused).
  jobs_.erase(std::remove_if(jobs_.begin(), jobs_.end(), [](const auto& j) { return !j->procs->tree_alive(); }),
              jobs_.end());
  ++ticks_;
  last_tick_ = now;
  tick_seconds_ = seconds_since(t0);

  const int64_t d0 = samples::clock_ns(CLOCK_MONOTONIC);
  bool any = false;
  for (auto& j : jobs_) {
    if (j->ticks.size() < 2) continue;
    if (j->last_diagnosis_ns >= 0 && now.monotonic_ns - j->last_diagnosis_ns < opt_.diagnose_interval_ns) continue;
    j->last_diagnosis_ns = now.monotonic_ns;
    diagnose(*j, now.realtime_ns);
    any = true;
  }
  if (any) diagnosis_seconds_ = seconds_since(d0);
}

// The job's window as a recording (the shape `run` writes and `analyze DIR` reads), then
// the live analysis and the diagnosis engine over it.
void NodeSampler::diagnose(Job& job, int64_t now_ns) {
  samples::Recording rec;
  samples::RunMeta& m = rec.meta;
  m.chokepoint_version = base_.version;
  m.pid = job.root;
  m.interval_ns = opt_.interval_ns;
  m.host = live::host_facts();
  m.gpu_unavailable = base_.gpu_unavailable;
  m.gpus = gpu_meta_;
  for (samples::GpuMeta& g : m.gpus) {
    g.used = job.gpus.count(g.index) != 0;
    for (const auto& [pid, gpus] : gpu_pids_) {
      if (gpus.count(g.index) != 0 && job.latest.count(pid) != 0) g.pids.push_back(pid);
    }
  }
  for (const auto& [pid, p] : job.procs->processes()) m.processes.push_back(p);
  m.start_ns = job.ticks.front().time_ns;
  m.end_ns = now_ns;
  rec.complete = true;
  for (const samples::Tick& t : node_ticks_) {
    if (t.time_ns >= m.start_ns) rec.samples.append(t);
  }
  for (const samples::Tick& t : job.ticks) rec.samples.append(t);
  rec.ticks = job.ticks.size();

  const analyses::sampled::LiveAnalysis la = analyses::sampled::analyze_recording(rec);
  const rules::Diagnosis d = rules::diagnose_samples(rec, la);
  JobSnapshot& s = job.diagnosis;
  s.diagnosed = true;
  s.window_s = la.duration_s;
  s.bound = rules::category_name(d.bound);
  s.confidence = d.confidence;
  s.summary = d.summary;
  s.findings.clear();
  for (const rules::Finding& f : d.findings) {
    s.findings.push_back({f.id, rules::category_name(f.category), std::string(severity_name(f.severity)),
                          f.estimated_speedup, f.estimate_remedy});
  }
  ++diagnoses_;
}

JobSnapshot NodeSampler::job_snapshot(const Job& job) const {
  JobSnapshot s = job.diagnosis;
  s.pid = job.root;
  s.gpus.assign(job.gpus.begin(), job.gpus.end());
  const auto& seen = job.procs->processes();
  if (auto it = seen.find(job.root); it != seen.end()) {
    s.name = job_name(it->second.cmdline, it->second.comm);
    for (const std::string& a : it->second.cmdline) s.command += (s.command.empty() ? "" : " ") + a;
    s.rank = it->second.rank;
  }
  for (const auto& [pid, values] : job.latest) {
    ProcessSnapshot p;
    p.pid = pid;
    p.values = values;
    if (auto it = seen.find(pid); it != seen.end()) {
      p.comm = it->second.comm;
      p.role = it->second.role;
      p.rank = it->second.rank;
    }
    if (auto it = gpu_pid_memory_.find(pid); it != gpu_pid_memory_.end()) p.gpu_memory_bytes = it->second;
    s.processes.push_back(std::move(p));
  }
  auto cpu = [](const ProcessSnapshot& p) {
    const auto it = p.values.find(MetricId::kProcCpuPct);
    return it == p.values.end() ? -1.0 : it->second;
  };
  std::stable_sort(s.processes.begin(), s.processes.end(),
                   [&](const ProcessSnapshot& a, const ProcessSnapshot& b) { return cpu(a) > cpu(b); });
  if (s.processes.size() > opt_.max_processes_shown) {
    s.processes_not_shown = s.processes.size() - opt_.max_processes_shown;
    s.processes.resize(opt_.max_processes_shown);
  }
  return s;
}

NodeSnapshot NodeSampler::snapshot() const {
  NodeSnapshot n = base_;
  n.time_ns = last_tick_.realtime_ns;
  for (const samples::GpuMeta& g : gpu_meta_) {
    if (!gpus_) break;
    GpuSnapshot gs;
    gs.meta = g;
    n.gpus.push_back(std::move(gs));
  }
  for (const auto& [key, value] : node_latest_) {
    const auto& [metric, entity] = key;
    if (entity.kind == EntityKind::kHost) {
      n.host[metric] = value;
    } else if (entity.kind == EntityKind::kGpu) {
      for (GpuSnapshot& g : n.gpus) {
        if (g.meta.index == entity.id) g.values[metric] = value;
      }
    }
  }
  for (const auto& j : jobs_) n.jobs.push_back(job_snapshot(*j));
  n.ticks = ticks_;
  n.diagnoses = diagnoses_;
  n.jobs_started = jobs_started_;
  n.jobs_dropped = jobs_dropped_;
  n.tick_seconds = tick_seconds_;
  n.diagnosis_seconds = diagnosis_seconds_;
  return n;
}

}  // namespace chokepoint::serve
