#include "live/session.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/cpu_list.h"
#include "base/version.h"

namespace chokepoint::live {
namespace {

using samples::MetricId;

// How often the GPU-to-workload match is redone and meta.json refreshed (so a kill -9 of
// chokepoint keeps the GPU use and the process list up to this old).
constexpr int64_t kMatchIntervalNs = 1'000'000'000;
constexpr int64_t kMetaRefreshNs = 10'000'000'000;

double thread_cpu_ms() { return static_cast<double>(samples::clock_ns(CLOCK_THREAD_CPUTIME_ID)) / 1e6; }

double process_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::optional<double> Latest::get(MetricId m, const samples::Entity& e) const {
  const auto it = values.find(Key{m, e});
  if (it == values.end() || !it->second.valid) return std::nullopt;
  return it->second.value;
}

std::map<std::string, std::string> host_facts() {
  std::map<std::string, std::string> h;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) h["hostname"] = name;
  utsname u{};
  if (uname(&u) == 0) h["kernel"] = u.release;
  if (const long n = sysconf(_SC_NPROCESSORS_ONLN); n > 0) h["cpus"] = std::to_string(n);
  if (const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE); pages > 0 && page > 0) {
    h["mem_total_bytes"] = std::to_string(static_cast<int64_t>(pages) * page);
  }
  if (auto nodes = parse_cpu_list(read_first_line("/sys/devices/system/node/online")); nodes && !nodes->empty()) {
    h["numa_nodes"] = std::to_string(nodes->size());
  }
  return h;
}

Result<std::unique_ptr<Session>> Session::start(const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session());
  s->opt_ = options;
  s->cpu_at_start_s_ = process_cpu_s();
  const samples::TickTime t0 = samples::now();

  samples::RunMeta& m = s->meta_;
  m.chokepoint_version = CHOKEPOINT_VERSION;
  m.command = options.command;
  m.pid = options.roots.empty() ? 0 : options.roots.front();
  m.recorder_pid = getpid();
  m.start_ns = t0.realtime_ns;
  m.interval_ns = options.interval_ns;
  m.host = host_facts();

  if (options.gpu) {
    auto nv = nvml::Nvml::open();
    if (!nv.ok()) {
      m.gpu_unavailable = nv.status().message();
    } else {
      s->nvml_ = std::move(nv.value());
      sampler::gpu::GpuSamplerOptions go;
      go.gpm_interval_ns = std::max<int64_t>(options.gpm_interval_ns, 100'000'000);  // NVML's floor
      s->gpus_ = std::make_unique<sampler::gpu::GpuSampler>(*s->nvml_, go);
      m.gpus = s->gpus_->describe();
      if (s->gpus_->device_count() == 0) {
        m.gpu_unavailable = "NVML loaded but sees no GPU";
        for (const std::string& why : s->gpus_->skipped()) m.gpu_unavailable += "; " + why;
        s->gpus_.reset();
      }
    }
  } else {
    m.gpu_unavailable = "GPU sampling turned off (--no-gpu)";
  }

  s->fs_ = std::make_unique<sampler::proc::ProcFs>(
      options.proc_root.empty() ? sampler::proc::ProcFs::live() : sampler::proc::ProcFs::fixture(options.proc_root));
  s->host_ = std::make_unique<sampler::proc::HostSampler>(*s->fs_);
  if (!options.roots.empty()) {
    s->procs_ = std::make_unique<sampler::proc::ProcessSampler>(*s->fs_,
                                                                sampler::proc::live_process_options(options.roots));
  }
  auto w = samples::RecordingWriter::create(options.out_dir, m, options.replace);
  if (!w.ok()) return w.status();
  s->writer_ = std::move(w.value());
  return s;
}

Session::~Session() = default;

Status Session::add_root(int64_t pid) {
  opt_.roots.push_back(pid);
  if (meta_.pid == 0) meta_.pid = pid;
  procs_ = std::make_unique<sampler::proc::ProcessSampler>(*fs_, sampler::proc::live_process_options(opt_.roots));
  return samples::write_meta_atomically(writer_->dir(), meta_);
}

const std::map<int64_t, samples::ProcessMeta>& Session::processes() const {
  static const std::map<int64_t, samples::ProcessMeta> kNone;
  return procs_ ? procs_->processes() : kNone;
}

bool Session::tree_alive() const { return procs_ && procs_->tree_alive(); }

double Session::own_cpu_s() const {
  return cpu_after_first_tick_s_ < 0 ? 0 : process_cpu_s() - cpu_after_first_tick_s_;
}

Status Session::tick(const samples::TickTime& now) {
  tick_.time_ns = now.realtime_ns;
  tick_.samples.clear();
  double t = thread_cpu_ms();
  auto charge = [&](const char* part) {
    const double t2 = thread_cpu_ms();
    meta_.sampler_cpu_ms[part] += t2 - t;
    t = t2;
  };
  host_->sample(now, tick_);
  charge("host");
  sampler::proc::TreeEvents events;
  if (procs_) procs_->sample(now, tick_, &events);
  charge("processes");
  if (gpus_ && (last_gpu_ns_ < 0 || now.monotonic_ns - last_gpu_ns_ >= opt_.gpu_interval_ns - opt_.interval_ns / 2)) {
    last_gpu_ns_ = now.monotonic_ns;
    gpus_->sample(now, tick_);
  }
  charge("gpu");
  for (const samples::ProcessMeta& p : events.appeared) {
    if (Status st = writer_->process_seen(p); !st.ok()) return st;
  }
  for (int64_t pid : events.exited) {
    if (Status st = writer_->process_exited(pid, now.realtime_ns); !st.ok()) return st;
  }
  if (Status st = writer_->append(tick_); !st.ok()) return st;
  for (const samples::Sample& smp : tick_.samples) latest_.values[Latest::Key{smp.metric, smp.entity}] = smp;
  recent_.push_back(tick_);
  while (recent_.front().time_ns < tick_.time_ns - kRecentNs) recent_.pop_front();
  charge("write");
  ++ticks_;
  if (ticks_ == 1) {
    cpu_after_first_tick_s_ = process_cpu_s();
    startup_cpu_s_ = cpu_after_first_tick_s_ - cpu_at_start_s_;
  }

  if (last_match_ns_ < 0 || now.monotonic_ns - last_match_ns_ >= kMatchIntervalNs) {
    const bool first = last_match_ns_ < 0;
    last_match_ns_ = now.monotonic_ns;
    match_gpus();
    // Refresh meta.json now and then (not on the first tick: start() just wrote it).
    if (first) last_meta_ns_ = now.monotonic_ns;
    if (now.monotonic_ns - last_meta_ns_ >= kMetaRefreshNs) {
      last_meta_ns_ = now.monotonic_ns;
      samples::RunMeta snapshot = meta_;
      for (const auto& [pid, p] : processes()) snapshot.processes.push_back(p);
      if (Status st = samples::write_meta_atomically(writer_->dir(), snapshot); !st.ok()) return st;
    }
  }
  return Status::Ok();
}

void Session::match_gpus() {
  if (!gpus_) return;
  std::vector<int64_t> tree;
  if (procs_) tree = procs_->live_pids();
  const auto pids = gpus_->compute_pids();
  if (opt_.roots.empty()) {
    // watch without --pid: every GPU is judged.
    for (auto& g : meta_.gpus) g.used = true;
    return;
  }
  // Read until seen once (a few hundred readlinks a match at most).
  if (!tree_held_gpu_.value_or(false)) {
    if (const std::optional<bool> held = sampler::gpu::holds_nvidia_device(tree)) tree_held_gpu_ = held;
  }
  const sampler::gpu::GpuUse use = sampler::gpu::match_gpu_processes(pids, tree, sampler::gpu::pid_exists_here,
                                                                     [this] { return tree_held_gpu_; });
  const std::set<int64_t> in_tree(tree.begin(), tree.end());
  for (size_t i = 0; i < meta_.gpus.size() && i < pids.size(); ++i) {
    samples::GpuMeta& g = meta_.gpus[i];
    if (std::find(use.gpus.begin(), use.gpus.end(), static_cast<unsigned>(i)) != use.gpus.end()) g.used = true;
    for (int64_t p : pids[i]) {
      if (in_tree.count(p) && std::find(g.pids.begin(), g.pids.end(), p) == g.pids.end()) g.pids.push_back(p);
    }
  }
  // A failed match is sticky only while no PID ever matched.
  const bool any_matched = std::any_of(meta_.gpus.begin(), meta_.gpus.end(),
                                       [](const samples::GpuMeta& g) { return !g.pids.empty(); });
  if (!any_matched && use.pid_match_failed) meta_.gpu_note = use.note;
  if (any_matched) meta_.gpu_note.clear();
}

void Session::discard() { writer_->discard(); }

Status Session::finish(std::optional<int> exit_code) {
  meta_.end_ns = samples::clock_ns(CLOCK_REALTIME);
  meta_.exit_code = exit_code;
  match_gpus();
  meta_.processes.clear();
  for (const auto& [pid, p] : processes()) meta_.processes.push_back(p);
  return writer_->finish(meta_);
}

}  // namespace chokepoint::live
