#include "live/monitor.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <utility>
#include <vector>

#include "base/terminal_text.h"
#include "live/child.h"
#include "live/terminal.h"
#include "live/view_input.h"

namespace chokepoint::live {
namespace {

// Signal state: handlers only set these.
volatile sig_atomic_t g_interrupts = 0;  // stop signals received (kStopSignals)
volatile sig_atomic_t g_forward = 0;     // the last of them to forward (0: none)
volatile sig_atomic_t g_resized = 0;
// Other signals the command gets as they come (kPassedSignals): a job may act on SIGUSR1
// (a checkpoint) or use SIGALRM itself. Left at their default action, each of them would
// kill chokepoint and leave the recording unfinished (issue 47).
volatile sig_atomic_t g_passed[NSIG] = {};
volatile sig_atomic_t g_any_passed = 0;

// Stop signals: forwarded to the command, counted toward the third that kills it (run),
// or the end of watching (watch). SIGQUIT and SIGXCPU end the monitoring as SIGTERM does.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU};
// Forwarded and otherwise ignored. Real-time signals are added at run time (SIGRTMIN is
// not a constant).
constexpr int kPassedSignals[] = {SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGXFSZ};

void on_stop_signal(int sig, siginfo_t*, void*) {
  g_interrupts = g_interrupts + 1;
  // The command runs in a process group of its own (child.h): whatever reaches us, from
  // kill or from a terminal that the command's group does not hold, is forwarded to it.
  g_forward = sig;
}
void on_passed_signal(int sig) {
  if (sig > 0 && sig < NSIG) g_passed[sig] = 1;
  g_any_passed = 1;
}
void on_winch(int) { g_resized = 1; }
void on_chld(int) {}  // only to interrupt the sleep

std::vector<int> passed_signals() {
  std::vector<int> v(std::begin(kPassedSignals), std::end(kPassedSignals));
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) v.push_back(sig);
  return v;
}

struct SignalScope {
  // Handlers, not SIG_IGN: exec resets a handled signal to its default in the command,
  // but keeps an ignored one ignored.
  std::vector<std::pair<int, struct sigaction>> old;
  void install(int sig, const struct sigaction& sa) {
    struct sigaction prev {};
    if (sigaction(sig, &sa, &prev) == 0) old.emplace_back(sig, prev);
  }
  SignalScope() {
    g_interrupts = 0;
    g_forward = 0;
    g_resized = 0;
    g_any_passed = 0;
    for (auto& p : g_passed) p = 0;
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: the sleep returns EINTR
    sa.sa_sigaction = on_stop_signal;
    for (int sig : kStopSignals) install(sig, sa);
    struct sigaction f {};
    sigemptyset(&f.sa_mask);
    f.sa_handler = on_passed_signal;
    for (int sig : passed_signals()) install(sig, f);
    struct sigaction w {};
    sigemptyset(&w.sa_mask);
    w.sa_handler = on_winch;
    install(SIGWINCH, w);
    struct sigaction c {};
    sigemptyset(&c.sa_mask);
    c.sa_handler = on_chld;
    c.sa_flags = SA_NOCLDSTOP;
    install(SIGCHLD, c);
    struct sigaction p {};
    sigemptyset(&p.sa_mask);
    p.sa_handler = SIG_IGN;  // a closed stderr must not kill us before the child ends
    install(SIGPIPE, p);
  }
  ~SignalScope() {
    for (auto it = old.rbegin(); it != old.rend(); ++it) sigaction(it->first, &it->second, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;
};

void sleep_until(int64_t mono_ns) {
  timespec ts{};
  ts.tv_sec = mono_ns / 1'000'000'000;
  ts.tv_nsec = mono_ns % 1'000'000'000;
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: the caller re-checks
}

void note(bool quiet, const std::string& text) {
  // Notes quote the command, the directory and other tools' settings: control
  // characters there are shown as escapes (base/terminal_text.h).
  if (!quiet) std::fprintf(stderr, "chokepoint: %s\n", escape_controls(text).c_str());
}

bool dumb_terminal() {
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") == 0 || *term == '\0';
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Most of the terminal stays the command's: the panel takes at most this share of it.
int panel_rows(int rows) { return std::max(3, std::min(14, rows / 3)); }

// The environment that loads the CUPTI tracer into the command (run --trace): empty when
// tracing is off or another tool injects into CUDA already.
std::vector<std::pair<std::string, std::string>> tracer_env(const MonitorOptions& o, const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> env;
  if (o.tracer_library.empty()) return env;
  const char* other = std::getenv("CUDA_INJECTION64_PATH");
  if (other != nullptr && *other != '\0') {
    note(o.quiet, std::string("--trace: CUDA_INJECTION64_PATH is already set (") + other +
                      "): another tool injects into CUDA, so no CUDA trace; sampling goes on");
    return env;
  }
  std::error_code ec;
  const std::string abs_dir = std::filesystem::absolute(dir, ec).string();
  env = {{"CUDA_INJECTION64_PATH", o.tracer_library}, {"CHOKEPOINT_TRACE_DIR", ec ? dir : abs_dir}};
  if (!o.trace_window.empty()) env.emplace_back("CHOKEPOINT_TRACE_WINDOW", o.trace_window);
  if (!o.tracer_cupti_dir.empty()) {  // last: the job's own library path keeps precedence
    const char* ld = std::getenv("LD_LIBRARY_PATH");
    env.emplace_back("LD_LIBRARY_PATH",
                     ld != nullptr && *ld != '\0' ? std::string(ld) + ":" + o.tracer_cupti_dir : o.tracer_cupti_dir);
  }
  // NVTX ranges reach CUPTI through the same library (tracer/cuda/injection.cc),
  // unless another NVTX tool is named already.
  const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
  if (nvtx == nullptr || *nvtx == '\0') {
    env.emplace_back("NVTX_INJECTION64_PATH", o.tracer_library);
  } else {
    note(o.quiet, std::string("--trace: NVTX_INJECTION64_PATH is already set (") + nvtx +
                      "): NVTX ranges go to that tool, not into the trace");
  }
  return env;
}

// Starts the command (run) and makes it the session's root; nullopt for watch.
Result<std::optional<Child>> start_command(const MonitorOptions& o, Session& session, const std::string& dir) {
  if (o.command.empty()) return std::optional<Child>();
  auto spawned = Child::spawn(o.command, tracer_env(o, dir), {o.stdout_path, o.stderr_path});
  if (!spawned.ok()) {
    // Nothing ran: no half recording is left to block a retry with the same -o.
    session.discard();
    return spawned.status();
  }
  std::optional<Child> child = std::move(spawned.value());
  if (Status s = session.add_root(child->pid()); !s.ok()) note(o.quiet, "recording: " + s.message());
  return child;
}

// The sampling loop of one run or watch, from the first tick to the last.
class MonitorLoop {
 public:
  MonitorLoop(const MonitorOptions& o, const SessionOptions& so, Session& session, std::optional<Child>& child,
              ViewMode view, MonitorResult& res)
      : o_(o),
        so_(so),
        session_(session),
        child_(child),
        view_(view),
        res_(res),
        panel_(STDERR_FILENO),
        stacks_(stack_options(), res.dir, o.quiet),
        t0_(samples::now()) {
    vi_.title = child ? join(o.command) : o.watch_pid ? "pid " + std::to_string(*o.watch_pid) : "all GPUs";
    vi_.dir = res.dir;
    vi_.meta = &session.meta();
    vi_.latest = &session.latest();
    vi_.processes = (child || o.watch_pid) ? &session.processes() : nullptr;
    vi_.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    next_tick_ = t0_.monotonic_ns;
    next_view_ = t0_.monotonic_ns + 1'000'000'000;  // one second of data first
  }

  // Ticks until the command exits, the watched process goes away, --duration passes or
  // a signal says stop.
  void run() {
    for (;;) {
      const samples::TickTime now = stamp();
      if (now.monotonic_ns >= next_tick_) tick(now);
      if (should_stop(now)) break;
      if (g_resized) {
        g_resized = 0;
        panel_.resized();
      }
      if (view_ != ViewMode::kNone && now.monotonic_ns >= next_view_) show(now);
      sleep_until(next_tick_);
    }
  }

  // Stops what is left of the command, takes one last tick and closes the recording.
  void finish() {
    stop_command_group();
    if (child_) child_->restore_terminal();
    // One last tick so the end of the run is in the recording, then close it.
    const samples::TickTime end = stamp();
    (void)session_.tick(end);
    panel_.end();
    if (child_) res_.exit_code = child_->poll();
    res_.ticks = session_.ticks();
    res_.elapsed_s = static_cast<double>(end.monotonic_ns - t0_.monotonic_ns) / 1e9;
    res_.own_cpu_s = session_.own_cpu_s();
    res_.startup_cpu_s = session_.startup_cpu_s();
    res_.sampling_s = std::max(0.0, res_.elapsed_s - static_cast<double>(so_.interval_ns) / 1e9);
    stacks_.finish(session_);
    if (Status s = session_.finish(res_.exit_code); !s.ok()) {
      note(o_.quiet, "could not finish the recording: " + s.message());
    }
  }

 private:
  StackOptions stack_options() const {
    StackOptions so = o_.stacks;
    if (!child_ && !o_.watch_pid) so.enabled = false;  // watching all GPUs: no job to sample
    return so;
  }

  // Ticks are stamped with the wall clock of the start plus the monotonic time since: an
  // NTP step during the run must not make time go backwards in the recording.
  samples::TickTime stamp() const {
    samples::TickTime t = samples::now();
    t.realtime_ns = t0_.realtime_ns + (t.monotonic_ns - t0_.monotonic_ns);
    return t;
  }

  void tick(const samples::TickTime& now) {
    if (Status s = session_.tick(now); !s.ok() && !write_failed_) {
      write_failed_ = true;  // say it once; the command keeps running
      note(o_.quiet, "recording stopped being written: " + s.message());
    }
    next_tick_ += so_.interval_ns;
    if (next_tick_ <= now.monotonic_ns) next_tick_ = now.monotonic_ns + so_.interval_ns;  // fell behind: skip
    stacks_.poll(session_, now.realtime_ns, now.monotonic_ns);
  }

  // Why we might stop; also forwards signals and stops the command when it is time.
  bool should_stop(const samples::TickTime& now) {
    if (child_ && child_->poll()) return true;
    if (o_.watch_pid && !session_.tree_alive() && session_.ticks() > 0) {
      note(o_.quiet, "process " + std::to_string(*o_.watch_pid) + " has exited");
      return true;
    }
    if (g_any_passed) pass_signals();
    if (g_interrupts > handled_interrupts_ && handle_interrupts(now)) return true;
    if (o_.duration_ns && now.monotonic_ns - t0_.monotonic_ns >= *o_.duration_ns) {
      if (!child_) return true;
      if (kill_at_ < 0) {
        note(o_.quiet, "--duration reached: stopping the command (SIGTERM, SIGKILL in 10 s)");
        stop_child(now, "duration");
      }
    }
    if (child_ && kill_at_ < 0 && o_.stop_check) {
      if (std::string why = o_.stop_check(); !why.empty()) stop_child(now, why);
    }
    if (child_ && kill_at_ >= 0 && now.monotonic_ns >= kill_at_) {
      child_->signal(SIGKILL);
      kill_at_ = INT64_MAX;
    }
    return false;
  }

  void stop_child(const samples::TickTime& now, const std::string& why) {
    child_->signal(SIGTERM);
    kill_at_ = now.monotonic_ns + o_.kill_grace_ns;
    res_.stopped = why;
  }

  // Signals that are the command's business (SIGUSR1, SIGALRM ...): forwarded under run,
  // dropped under watch (the process watched is not ours to signal).
  void pass_signals() {
    g_any_passed = 0;
    for (int sig = 1; sig < NSIG; ++sig) {
      if (!g_passed[sig]) continue;
      g_passed[sig] = 0;
      if (child_) child_->signal_first(sig);
    }
  }

  // New interrupts: watch stops (true); run forwards them to the command and kills it at
  // the third.
  bool handle_interrupts(const samples::TickTime& now) {
    handled_interrupts_ = g_interrupts;
    res_.interrupted = true;
    if (!child_) return true;
    if (g_forward != 0) {
      child_->signal(g_forward);
      g_forward = 0;
    }
    if (handled_interrupts_ == 1) {
      note(o_.quiet, "interrupted: waiting for the command to exit (interrupt twice more to kill it)");
    } else if (handled_interrupts_ >= 3 && kill_at_ < 0) {
      kill_at_ = now.monotonic_ns;
    }
    return false;
  }

  // The live view: the panel once a second, or a plain line every line interval.
  void show(const samples::TickTime& now) {
    vi_.elapsed_s = static_cast<double>(now.monotonic_ns - t0_.monotonic_ns) / 1e9;
    // The verdict so far, from the last minute of samples, every few seconds: within 30 s
    // of the GPU's first work the view says what binds the job (issue 42).
    if (o_.live_verdict && now.monotonic_ns >= next_verdict_ && session_.ticks() >= kMinVerdictTicks) {
      vi_.verdict = o_.live_verdict(session_.meta(), session_.processes(), session_.recent_ticks());
      next_verdict_ = now.monotonic_ns + o_.live_verdict_interval_ns;
    }
    if (view_ == ViewMode::kPanel) {
      int rows = 0, cols = 0;
      if (o_.renderer.panel && panel_.size(&rows, &cols)) panel_.draw(o_.renderer.panel(vi_, cols, panel_rows(rows)));
      next_view_ = now.monotonic_ns + 1'000'000'000;
    } else {
      if (o_.renderer.line) std::fprintf(stderr, "%s\n", o_.renderer.line(vi_).c_str());
      next_view_ = now.monotonic_ns + o_.line_interval_ns;
    }
  }

  // Stopping the command (--duration, the third interrupt): its first process may be gone
  // while others of its group, which ignore SIGTERM, live on. They get until the SIGKILL
  // deadline (at most 10 s from now), then the group is killed.
  void stop_command_group() {
    if (!child_ || kill_at_ < 0) return;
    const int64_t deadline = std::min(kill_at_, stamp().monotonic_ns + o_.kill_grace_ns);
    while (child_->group_alive() && stamp().monotonic_ns < deadline) sleep_until(stamp().monotonic_ns + 50'000'000);
    if (child_->group_alive()) child_->signal(SIGKILL);
  }

  const MonitorOptions& o_;
  const SessionOptions& so_;
  Session& session_;
  std::optional<Child>& child_;
  const ViewMode view_;
  MonitorResult& res_;
  PanelTerminal panel_;
  ViewInput vi_;
  StackSampling stacks_;
  const samples::TickTime t0_;
  int64_t next_tick_ = 0;
  int64_t next_view_ = 0;
  int64_t next_verdict_ = 0;
  static constexpr int64_t kMinVerdictTicks = 20;  // 2 s at the default 100 ms
  int64_t kill_at_ = -1;                           // after --duration or the third interrupt: SIGKILL then
  int handled_interrupts_ = 0;
  bool write_failed_ = false;
};

}  // namespace

Result<MonitorResult> monitor(const MonitorOptions& o) {
  MonitorResult res;
  if (o.watch_pid && ::kill(static_cast<pid_t>(*o.watch_pid), 0) != 0 && errno == ESRCH) {
    return Status::Error(ErrorCode::kNotFound, "no process with PID " + std::to_string(*o.watch_pid));
  }
  SessionOptions so = o.session;
  so.command = o.command;
  if (o.watch_pid) so.roots = {*o.watch_pid};
  auto started = Session::start(so);
  if (!started.ok()) return started.status();
  Session& session = *started.value();
  res.dir = session.dir();

  ViewMode view = o.view;
  if (view == ViewMode::kAuto) view = isatty(STDERR_FILENO) && !dumb_terminal() ? ViewMode::kPanel : ViewMode::kLines;
  if (!session.gpu_unavailable().empty()) {
    note(o.quiet, "GPU metrics unavailable: " + session.gpu_unavailable() + "; diagnosing the host side only");
  }

  SignalScope signals;
  auto command = start_command(o, session, res.dir);
  if (!command.ok()) return command.status();
  std::optional<Child> child = std::move(command.value());
  note(o.quiet, "recording to " + res.dir + "/ (" + (child ? "pid " + std::to_string(child->pid()) : "watching") + ")");

  MonitorLoop loop(o, so, session, child, view, res);
  loop.run();
  loop.finish();
  return res;
}

}  // namespace chokepoint::live
