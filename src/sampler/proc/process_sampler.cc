#include "sampler/proc/process_sampler.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "sampler/proc/roles.h"

namespace chokepoint::sampler::proc {
namespace {

using samples::Entity;
using samples::MetricId;
using samples::ProcessMeta;
using samples::Tick;
using samples::TickTime;

std::optional<int64_t> parse_pid(const std::string& s) {
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

std::string proc_dir(int64_t pid) { return "/proc/" + std::to_string(pid) + "/"; }
std::string task_dir(int64_t pid, int64_t tid) { return proc_dir(pid) + "task/" + std::to_string(tid) + "/"; }

bool dead(char state) { return state == 'Z' || state == 'X' || state == 'x'; }

double per_s(uint64_t before, uint64_t after, double dt_s) {
  return after >= before && dt_s > 0 ? static_cast<double>(after - before) / dt_s : 0.0;
}

}  // namespace

ProcessSamplerOptions live_process_options(std::vector<int64_t> roots) {
  ProcessSamplerOptions o;
  o.roots = std::move(roots);
  o.exclude = {static_cast<int64_t>(getpid())};
  if (const long hz = sysconf(_SC_CLK_TCK); hz > 0) o.clock_ticks_per_s = hz;
  if (const long page = sysconf(_SC_PAGESIZE); page > 0) o.page_size = page;
  return o;
}

std::vector<int64_t> ProcessSampler::live_pids() const {
  std::vector<int64_t> pids;
  for (const auto& [pid, p] : live_) pids.push_back(pid);
  return pids;
}

void ProcessSampler::sample(const TickTime& now, Tick& out, TreeEvents* events) {
  if (last_discovery_ns_ < 0 || now.monotonic_ns - last_discovery_ns_ >= opt_.discovery_interval_ns) {
    discover(now, events);
    last_discovery_ns_ = now.monotonic_ns;
  }
  for (auto it = live_.begin(); it != live_.end();) {
    const int64_t pid = it->first;
    ++it;  // sample_process may retire (erase) this entry
    sample_process(pid, live_.at(pid), now, out, events);
  }
  visit_threads(now, out);
  for (const auto& [pid, p] : live_) emit_process_sums(pid, p, out);
}

void ProcessSampler::discover(const TickTime& now, TreeEvents* events) {
  std::set<int64_t> present;
  std::map<int64_t, TaskStat> candidates;
  for (const std::string& name : fs_.list_dir("/proc")) {
    const auto pid = parse_pid(name);
    if (!pid) continue;
    present.insert(*pid);
    if (live_.count(*pid) || outsiders_.count(*pid) || gone_.count(*pid)) continue;
    // Not through the held-descriptor cache: most of these PIDs are read once, ever.
    if (fs_.read(proc_dir(*pid) + "stat", buf_) != 0) continue;
    fs_.forget(proc_dir(*pid));
    if (auto st = parse_task_stat(buf_); st && !dead(st->state)) candidates.emplace(*pid, std::move(*st));
  }
  for (const int64_t pid : opt_.exclude) {
    if (candidates.erase(pid) > 0) outsiders_.insert(pid);
  }
  for (const int64_t root : opt_.roots) {
    const auto c = candidates.find(root);
    if (c == candidates.end()) continue;
    adopt(root, c->second, /*is_root=*/true, now, events);
    candidates.erase(c);
  }
  // Children before grandchildren: repeat until no candidate's parent is in the tree.
  for (bool grew = true; grew;) {
    grew = false;
    for (auto c = candidates.begin(); c != candidates.end();) {
      if (live_.count(c->second.ppid)) {
        adopt(c->first, c->second, false, now, events);
        c = candidates.erase(c);
        grew = true;
      } else {
        ++c;
      }
    }
  }
  for (const auto& [pid, st] : candidates) outsiders_.insert(pid);
  // Forget judgements about PIDs that no longer exist: the number may be reused.
  std::erase_if(outsiders_, [&](int64_t pid) { return !present.count(pid); });
  std::erase_if(gone_, [&](int64_t pid) { return !present.count(pid); });
}

void ProcessSampler::adopt(int64_t pid, const TaskStat& stat, bool is_root, const TickTime& now, TreeEvents* events) {
  ProcessMeta m;
  m.pid = pid;
  m.ppid = stat.ppid;
  m.comm = stat.comm;
  if (fs_.read(proc_dir(pid) + "cmdline", buf_) == 0) m.cmdline = parse_cmdline(buf_);
  const auto parent = history_.find(stat.ppid);
  m.role = infer_role(is_root, m.comm, m.cmdline, parent != history_.end() ? &parent->second.cmdline : nullptr);
  read_rank(pid, m);
  if (fs_.read(proc_dir(pid) + "status", buf_) == 0) m.cpus_allowed = parse_task_status(buf_).cpus_allowed;
  fs_.forget(proc_dir(pid));  // cmdline, environ and status are read once: do not hold them
  m.first_seen_ns = m.last_seen_ns = now.realtime_ns;
  history_[pid] = m;
  live_[pid];
  if (events != nullptr) events->appeared.push_back(std::move(m));
}

// A torchrun rank's RANK, from its environment when we may read it.
void ProcessSampler::read_rank(int64_t pid, ProcessMeta& m) {
  if (m.role != samples::ProcessRole::kTorchrunRank || fs_.read(proc_dir(pid) + "environ", buf_) != 0) return;
  if (auto rank = find_environ(buf_, "RANK")) {
    int r = 0;
    if (std::from_chars(rank->data(), rank->data() + rank->size(), r).ec == std::errc()) m.rank = r;
  }
}

void ProcessSampler::retire(int64_t pid, const TickTime& now, TreeEvents* events) {
  live_.erase(pid);
  gone_.insert(pid);
  fs_.forget(proc_dir(pid));
  ProcessMeta& m = history_[pid];
  m.exited = true;
  m.last_seen_ns = now.realtime_ns;
  if (events != nullptr) events->exited.push_back(pid);
}

void ProcessSampler::list_threads(int64_t pid, ProcState& p) {
  std::set<int64_t> now_listed;
  for (const std::string& name : fs_.list_dir(proc_dir(pid) + "task")) {
    if (const auto tid = parse_pid(name)) now_listed.insert(*tid);
  }
  for (auto it = p.threads.begin(); it != p.threads.end();) {
    if (!now_listed.count(it->first)) {
      fs_.forget(task_dir(pid, it->first));
      it = p.threads.erase(it);
    } else {
      ++it;
    }
  }
  for (const int64_t tid : now_listed) p.threads.try_emplace(tid);
}

void ProcessSampler::sample_process(int64_t pid, ProcState& p, const TickTime& now, Tick& out, TreeEvents* events) {
  const std::string dir = proc_dir(pid);
  std::optional<TaskStat> st;
  if (fs_.read(dir + "stat", buf_) == 0) st = parse_task_stat(buf_);
  if (!st || dead(st->state)) {
    retire(pid, now, events);
    return;
  }
  ProcessMeta& meta = history_[pid];
  meta.last_seen_ns = now.realtime_ns;
  if (st->comm != meta.comm) {
    // A DataLoader worker renames itself after the fork that created it; a process that
    // calls exec changes name and argv (the launched command is often first seen before
    // its exec, or as a wrapper such as a pyenv shim): read argv again, judge the role
    // again, and record the process anew.
    meta.comm = st->comm;
    if (fs_.read(dir + "cmdline", buf_) == 0) meta.cmdline = parse_cmdline(buf_);
    fs_.forget(dir + "cmdline");
    const auto parent = history_.find(meta.ppid);
    meta.role = infer_role(meta.role == samples::ProcessRole::kLaunched, meta.comm, meta.cmdline,
                           parent != history_.end() ? &parent->second.cmdline : nullptr);
    if (!meta.rank) read_rank(pid, meta);
    fs_.forget(dir + "environ");
    if (events != nullptr) events->appeared.push_back(meta);
  }
  const Entity e = Entity::process(pid);
  const uint64_t cpu = st->utime + st->stime;
  const double dt_s = p.last_mono_ns < 0 ? 0.0 : static_cast<double>(now.monotonic_ns - p.last_mono_ns) / 1e9;
  if (dt_s > 0) {
    out.add(MetricId::kProcCpuPct, e,
            100.0 * per_s(p.cpu_ticks, cpu, dt_s) / static_cast<double>(opt_.clock_ticks_per_s));
  }
  out.add(MetricId::kProcThreads, e, static_cast<double>(st->num_threads));
  out.add(MetricId::kProcRssBytes, e, static_cast<double>(st->rss_pages * opt_.page_size));

  IoStat io;
  const int io_rc = fs_.read(dir + "io", buf_);
  if (io_rc == 0) io = parse_io(buf_);
  if (dt_s > 0) {
    // EACCES (another user's process, or ptrace rules) leaves the counters unknown.
    if (io.read_bytes && p.io.read_bytes)
      out.add(MetricId::kProcReadBytesPerS, e, per_s(*p.io.read_bytes, *io.read_bytes, dt_s));
    else out.add_invalid(MetricId::kProcReadBytesPerS, e);
    if (io.write_bytes && p.io.write_bytes)
      out.add(MetricId::kProcWriteBytesPerS, e, per_s(*p.io.write_bytes, *io.write_bytes, dt_s));
    else out.add_invalid(MetricId::kProcWriteBytesPerS, e);
  }
  p.io = io;
  p.cpu_ticks = cpu;
  p.last_mono_ns = now.monotonic_ns;
  if (st->num_threads != p.num_threads || p.threads.empty()) {
    p.num_threads = st->num_threads;
    list_threads(pid, p);
  }
}

void ProcessSampler::visit_threads(const TickTime& now, Tick& out) {
  size_t total = 0;
  for (const auto& [pid, p] : live_) total += p.threads.size();
  const size_t budget = std::min(total, opt_.thread_visits_per_tick);
  // Walk (pid, tid) in order from just after the cursor, wrapping once.
  auto next_after = [&](std::pair<int64_t, int64_t> c) -> std::pair<int64_t, int64_t> {
    for (auto it = live_.lower_bound(c.first); it != live_.end(); ++it) {
      const auto t = it->first == c.first ? it->second.threads.upper_bound(c.second) : it->second.threads.begin();
      if (t != it->second.threads.end()) return {it->first, t->first};
    }
    for (const auto& [pid, p] : live_) {
      if (!p.threads.empty()) return {pid, p.threads.begin()->first};
    }
    return {-1, -1};
  };
  for (size_t i = 0; i < budget; ++i) {
    cursor_ = next_after(cursor_);
    if (cursor_.first < 0) break;
    ProcState& p = live_.at(cursor_.first);
    visit_thread(cursor_.first, cursor_.second, p.threads.at(cursor_.second), now, out);
  }
}

void ProcessSampler::visit_thread(int64_t pid, int64_t tid, ThreadState& t, const TickTime& now, Tick& out) {
  const std::string dir = task_dir(pid, tid);
  std::optional<TaskStat> st;
  if (fs_.read(dir + "stat", buf_) == 0) st = parse_task_stat(buf_);
  if (!st) {
    // Gone since the task list was read: drop it now, the next listing confirms.
    t = ThreadState{};
    t.state = 'X';
    return;
  }
  std::optional<SchedStat> sched;
  if (fs_.read(dir + "schedstat", buf_) == 0) sched = parse_schedstat(buf_);
  TaskStatus status;
  if (fs_.read(dir + "status", buf_) == 0) status = parse_task_status(buf_);

  const uint64_t cpu = st->utime + st->stime;
  const double dt_s = t.visited_mono_ns < 0 ? 0.0 : static_cast<double>(now.monotonic_ns - t.visited_mono_ns) / 1e9;
  const Entity e = Entity::thread(pid, tid);
  if (dt_s > 0) {
    t.has_rates = true;
    t.runq_ns_per_s = sched ? per_s(t.sched.runq_wait_ns, sched->runq_wait_ns, dt_s) : 0.0;
    t.voluntary_per_s = status.voluntary_ctxt_switches && t.voluntary
                            ? per_s(*t.voluntary, *status.voluntary_ctxt_switches, dt_s)
                            : 0.0;
    t.involuntary_per_s = status.nonvoluntary_ctxt_switches && t.involuntary
                              ? per_s(*t.involuntary, *status.nonvoluntary_ctxt_switches, dt_s)
                              : 0.0;
    if (opt_.per_thread_series) {
      out.add(MetricId::kThreadCpuPct, e,
              100.0 * per_s(t.cpu_ticks, cpu, dt_s) / static_cast<double>(opt_.clock_ticks_per_s));
      if (sched) out.add(MetricId::kThreadRunqWaitNsPerS, e, t.runq_ns_per_s);
      else out.add_invalid(MetricId::kThreadRunqWaitNsPerS, e);
      if (status.voluntary_ctxt_switches) out.add(MetricId::kThreadCtxVoluntaryPerS, e, t.voluntary_per_s);
      else out.add_invalid(MetricId::kThreadCtxVoluntaryPerS, e);
      if (status.nonvoluntary_ctxt_switches) out.add(MetricId::kThreadCtxInvoluntaryPerS, e, t.involuntary_per_s);
      else out.add_invalid(MetricId::kThreadCtxInvoluntaryPerS, e);
    }
  }
  if (opt_.per_thread_series) out.add(MetricId::kThreadState, e, static_cast<double>(st->state));
  if (auto h = history_.find(pid); h != history_.end()) h->second.thread_names[tid] = st->comm;
  t.state = st->state;
  t.cpu_ticks = cpu;
  if (sched) t.sched = *sched;
  t.voluntary = status.voluntary_ctxt_switches;
  t.involuntary = status.nonvoluntary_ctxt_switches;
  t.visited_mono_ns = now.monotonic_ns;
}

void ProcessSampler::emit_process_sums(int64_t pid, const ProcState& p, Tick& out) const {
  int running = 0;
  bool any_state = false, any_rates = false;
  double vol = 0, invol = 0, runq = 0;
  for (const auto& [tid, t] : p.threads) {
    if (t.visited_mono_ns >= 0) any_state = true;
    if (t.state == 'R') ++running;
    if (t.has_rates) {
      any_rates = true;
      vol += t.voluntary_per_s;
      invol += t.involuntary_per_s;
      runq += t.runq_ns_per_s;
    }
  }
  const Entity e = Entity::process(pid);
  if (any_state) out.add(MetricId::kProcThreadsRunning, e, running);
  if (any_rates) {
    out.add(MetricId::kProcCtxVoluntaryPerS, e, vol);
    out.add(MetricId::kProcCtxInvoluntaryPerS, e, invol);
    out.add(MetricId::kProcRunqWaitNsPerS, e, runq);
  }
}

}  // namespace chokepoint::sampler::proc
