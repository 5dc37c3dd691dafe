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

#include "base/terminal_text.h"
#include "live/child.h"
#include "live/live_view.h"
#include "live/terminal.h"

namespace chokepoint::live {
namespace {

// Signal state: handlers only set these.
volatile sig_atomic_t g_interrupts = 0;       // SIGINT, SIGTERM, SIGHUP received
volatile sig_atomic_t g_forward = 0;          // the last of them to forward (0: none)
volatile sig_atomic_t g_resized = 0;

void on_stop_signal(int sig, siginfo_t*, void*) {
  g_interrupts = g_interrupts + 1;
  // The command runs in a process group of its own (child.h): whatever reaches us, from
  // kill or from a terminal that the command's group does not hold, is forwarded to it.
  g_forward = sig;
}
void on_winch(int) { g_resized = 1; }
void on_chld(int) {}  // only to interrupt the sleep

struct SignalScope {
  struct sigaction old_int {}, old_term {}, old_hup {}, old_winch {}, old_chld {}, old_pipe {};
  SignalScope() {
    g_interrupts = 0;
    g_forward = 0;
    g_resized = 0;
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: the sleep returns EINTR
    sa.sa_sigaction = on_stop_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    struct sigaction w {};
    sigemptyset(&w.sa_mask);
    w.sa_handler = on_winch;
    sigaction(SIGWINCH, &w, &old_winch);
    struct sigaction c {};
    sigemptyset(&c.sa_mask);
    c.sa_handler = on_chld;
    c.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &c, &old_chld);
    struct sigaction p {};
    sigemptyset(&p.sa_mask);
    p.sa_handler = SIG_IGN;  // a closed stderr must not kill us before the child ends
    sigaction(SIGPIPE, &p, &old_pipe);
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
    sigaction(SIGWINCH, &old_winch, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
    sigaction(SIGPIPE, &old_pipe, nullptr);
  }
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

}  // namespace

Result<MonitorResult> monitor(const MonitorOptions& o) {
  MonitorResult res;
  if (o.watch_pid && ::kill(static_cast<pid_t>(*o.watch_pid), 0) != 0 && errno == ESRCH) {
    return Status::Error("no process with PID " + std::to_string(*o.watch_pid));
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
  std::optional<Child> child;
  if (!o.command.empty()) {
    std::vector<std::pair<std::string, std::string>> env;
    if (!o.tracer_library.empty()) {
      const char* other = std::getenv("CUDA_INJECTION64_PATH");
      if (other != nullptr && *other != '\0') {
        note(o.quiet, std::string("--trace: CUDA_INJECTION64_PATH is already set (") + other +
                          "): another tool injects into CUDA, so no CUDA trace; sampling goes on");
      } else {
        std::error_code ec;
        const std::string abs_dir = std::filesystem::absolute(res.dir, ec).string();
        env = {{"CUDA_INJECTION64_PATH", o.tracer_library}, {"CHOKEPOINT_TRACE_DIR", ec ? res.dir : abs_dir}};
        // NVTX ranges reach CUPTI through the same library (tracer/cuda/injection.cc),
        // unless another NVTX tool is named already.
        const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
        if (nvtx == nullptr || *nvtx == '\0') {
          env.emplace_back("NVTX_INJECTION64_PATH", o.tracer_library);
        } else {
          note(o.quiet, std::string("--trace: NVTX_INJECTION64_PATH is already set (") + nvtx +
                            "): NVTX ranges go to that tool, not into the trace");
        }
      }
    }
    auto spawned = Child::spawn(o.command, env);
    if (!spawned.ok()) {
      // Nothing ran: no half recording is left to block a retry with the same -o.
      session.discard();
      return spawned.status();
    }
    child = std::move(spawned.value());
    if (Status s = session.add_root(child->pid()); !s.ok()) note(o.quiet, "recording: " + s.message());
  }
  note(o.quiet, "recording to " + res.dir + "/ (" + (child ? "pid " + std::to_string(child->pid()) : "watching") + ")");

  PanelTerminal panel(STDERR_FILENO);
  ViewInput vi;
  vi.title = child ? join(o.command) : o.watch_pid ? "pid " + std::to_string(*o.watch_pid) : "all GPUs";
  vi.dir = res.dir;
  vi.meta = &session.meta();
  vi.latest = &session.latest();
  vi.processes = (child || o.watch_pid) ? &session.processes() : nullptr;
  vi.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));

  StackOptions stack_opts = o.stacks;
  if (!child && !o.watch_pid) stack_opts.enabled = false;  // watching all GPUs: no job to sample
  StackSampling stacks(stack_opts, res.dir, o.quiet);

  const samples::TickTime t0 = samples::now();
  int64_t next_tick = t0.monotonic_ns;
  int64_t next_view = t0.monotonic_ns + 1'000'000'000;  // one second of data first
  int64_t kill_at = -1;    // after --duration or the third interrupt: SIGKILL then
  int handled_interrupts = 0;
  bool write_failed = false;

  // Ticks are stamped with the wall clock of the start plus the monotonic time since: an
  // NTP step during the run must not make time go backwards in the recording.
  auto stamp = [&t0] {
    samples::TickTime t = samples::now();
    t.realtime_ns = t0.realtime_ns + (t.monotonic_ns - t0.monotonic_ns);
    return t;
  };
  for (;;) {
    const samples::TickTime now = stamp();
    const double elapsed = static_cast<double>(now.monotonic_ns - t0.monotonic_ns) / 1e9;
    if (now.monotonic_ns >= next_tick) {
      if (Status s = session.tick(now); !s.ok() && !write_failed) {
        write_failed = true;  // say it once; the command keeps running
        note(o.quiet, "recording stopped being written: " + s.message());
      }
      next_tick += so.interval_ns;
      if (next_tick <= now.monotonic_ns) next_tick = now.monotonic_ns + so.interval_ns;  // fell behind: skip
      stacks.poll(session, now.realtime_ns, now.monotonic_ns);
    }

    // Why we might stop.
    if (child && child->poll()) break;
    if (o.watch_pid && !session.tree_alive() && session.ticks() > 0) {
      note(o.quiet, "process " + std::to_string(*o.watch_pid) + " has exited");
      break;
    }
    if (g_interrupts > handled_interrupts) {
      handled_interrupts = g_interrupts;
      res.interrupted = true;
      if (!child) break;
      if (g_forward != 0) {
        child->signal(g_forward);
        g_forward = 0;
      }
      if (handled_interrupts == 1) {
        note(o.quiet, "interrupted: waiting for the command to exit (interrupt twice more to kill it)");
      } else if (handled_interrupts >= 3 && kill_at < 0) {
        kill_at = now.monotonic_ns;
      }
    }
    if (o.duration_ns && now.monotonic_ns - t0.monotonic_ns >= *o.duration_ns) {
      if (!child) break;
      if (kill_at < 0) {
        note(o.quiet, "--duration reached: stopping the command (SIGTERM, SIGKILL in 10 s)");
        child->signal(SIGTERM);
        kill_at = now.monotonic_ns + 10'000'000'000;
      }
    }
    if (child && kill_at >= 0 && now.monotonic_ns >= kill_at) {
      child->signal(SIGKILL);
      kill_at = INT64_MAX;
    }

    if (g_resized) {
      g_resized = 0;
      panel.resized();
    }
    if (view != ViewMode::kNone && now.monotonic_ns >= next_view) {
      vi.elapsed_s = elapsed;
      if (view == ViewMode::kPanel) {
        int rows = 0, cols = 0;
        if (panel.size(&rows, &cols)) panel.draw(render_panel(vi, cols, panel_rows(rows)));
        next_view = now.monotonic_ns + 1'000'000'000;
      } else {
        std::fprintf(stderr, "%s\n", render_line(vi).c_str());
        next_view = now.monotonic_ns + o.line_interval_ns;
      }
    }
    sleep_until(next_tick);
  }

  // Stopping the command (--duration, the third interrupt): its first process may be gone
  // while others of its group, which ignore SIGTERM, live on. They get until the SIGKILL
  // deadline (at most 10 s from now), then the group is killed.
  if (child && kill_at >= 0) {
    const int64_t deadline = std::min(kill_at, stamp().monotonic_ns + 10'000'000'000);
    while (child->group_alive() && stamp().monotonic_ns < deadline) sleep_until(stamp().monotonic_ns + 50'000'000);
    if (child->group_alive()) child->signal(SIGKILL);
  }
  if (child) child->restore_terminal();

  // One last tick so the end of the run is in the recording, then close it.
  const samples::TickTime end = stamp();
  (void)session.tick(end);
  panel.end();
  if (child) res.exit_code = child->poll();
  res.ticks = session.ticks();
  res.elapsed_s = static_cast<double>(end.monotonic_ns - t0.monotonic_ns) / 1e9;
  res.own_cpu_s = session.own_cpu_s();
  res.startup_cpu_s = session.startup_cpu_s();
  res.sampling_s = std::max(0.0, res.elapsed_s - static_cast<double>(so.interval_ns) / 1e9);
  stacks.finish(session);
  if (Status s = session.finish(res.exit_code); !s.ok()) note(o.quiet, "could not finish the recording: " + s.message());
  return res;
}

}  // namespace chokepoint::live
