// chokepoint trace --pid PID (--steps N | --duration D): asks a job started under
// `run --trace=on-demand` for a trace window, over its control socket (tracer/control.h).
// PID may be the job's process or one it started (torchrun's ranks): every process of
// PID's tree whose tracer listens gets the request.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "base/terminal_text.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/pid_option.h"
#include "sampler/proc/process_tree.h"
#include "tracer/control.h"
#include "tracer/trace_format.h"
#include "tracer/window.h"

namespace chokepoint::cli {
namespace {

struct TraceOptions {
  int64_t pid = 0;
  int64_t steps = 0;
  std::string duration;
};

// A process's tracer environment: CHOKEPOINT_TRACE_DIR and CHOKEPOINT_TRACE_WINDOW.
struct Traced {
  int64_t pid = 0;
  std::string dir, window;
};

// /proc/PID/environ's two variables; false when it cannot be read (`err` = errno).
bool read_traced(int64_t pid, Traced* t, int* err) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) {
    *err = errno;
    return false;
  }
  t->pid = pid;
  const std::string dir_key = std::string(tracer::kTraceDirEnv) + "=";
  const std::string window_key = std::string(tracer::kTraceWindowEnv) + "=";
  std::string var;
  while (std::getline(in, var, '\0')) {
    if (var.starts_with(dir_key)) t->dir = var.substr(dir_key.size());
    if (var.starts_with(window_key)) t->window = var.substr(window_key.size());
  }
  return true;
}

// The request over one process's socket: true when it answered "ok".
bool ask(const Traced& t, const std::string& request) {
  const std::string socket = tracer::control_socket_path(t.dir, t.pid);
  std::string reply, error;
  if (!tracer::control_request(socket, request, 5000, &reply, &error)) {
    std::fprintf(stderr, "chokepoint trace: pid %lld: %s\n", static_cast<long long>(t.pid),
                 escape_controls(error).c_str());
    return false;
  }
  const bool ok = reply.starts_with("ok ");
  std::fprintf(ok ? stdout : stderr, "chokepoint trace: pid %lld: %s\n", static_cast<long long>(t.pid),
               escape_controls(reply.substr(ok                            ? 3
                                            : reply.starts_with("error ") ? 6
                                                                          : 0))
                   .c_str());
  return ok;
}

// The processes of the tree started under `run --trace`; the reason when there are none.
std::vector<Traced> traced_in(int64_t root, std::string* why) {
  Traced t;
  int err = 0;
  if (!read_traced(root, &t, &err)) {
    *why = err == ENOENT ? "no process " + std::to_string(root)
                         : "cannot read process " + std::to_string(root) + "'s environment (" + std::strerror(err) +
                               "): it is not one of your processes";
    return {};
  }
  std::vector<Traced> found;
  sampler::proc::ProcFs procfs = sampler::proc::ProcFs::live();
  for (int64_t pid : sampler::proc::process_tree(procfs, root)) {
    if (read_traced(pid, &t, &err) && !t.dir.empty()) found.push_back(t);
  }
  if (found.empty()) *why = "process " + std::to_string(root) + " was not started by `chokepoint run --trace`";
  return found;
}

int run_trace(const TraceOptions& o) {
  tracer::ControlRequest r;
  r.steps = o.steps;
  if (!o.duration.empty()) {
    const auto d = parse_duration_ns(o.duration);
    if (!d || *d <= 0) {
      say("trace", "--duration '" + o.duration + "' is not a duration (e.g. 10s)");
      return 2;
    }
    r.duration_ns = *d;
  }
  std::string why;
  const std::vector<Traced> found = traced_in(o.pid, &why);
  if (found.empty()) {
    say("trace", why);
    return 1;
  }
  int asked = 0, ok = 0;
  for (const Traced& t : found) {
    if (t.window != "on-demand") {
      why = "process " + std::to_string(t.pid) + " was started with " +
            (t.window.empty() ? std::string("--trace (the whole job)") : "fixed trace windows (" + t.window + ")") +
            ", not --trace=on-demand";
      continue;
    }
    if (tracer::check_control_socket(tracer::control_socket_path(t.dir, t.pid)).find("no control socket") == 0) {
      why = "process " + std::to_string(t.pid) +
            " has no tracer listening yet (it starts when the process "
            "initializes CUDA)";
      continue;
    }
    ++asked;
    ok += ask(t, tracer::format_control_request(r)) ? 1 : 0;
  }
  if (asked == 0) say("trace", why);
  return asked > 0 && ok == asked ? 0 : 1;
}

}  // namespace

RunFn add_trace_command(CLI::App& app) {
  auto o = std::make_shared<TraceOptions>();
  auto* c = app.add_subcommand("trace",
                               "Trace a window of a job started with `chokepoint run --trace=on-demand`: N steps or a "
                               "duration, into a trace file of its own in the job's recording.");
  c->add_option("--pid", o->pid,
                "The job's process (or the one that started it: every traced process below it is asked)")
      ->required()
      ->check(pid_validator());
  auto* steps = c->add_option("--steps", o->steps, "Trace this many steps from the next step start")
                    ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  auto* duration = c->add_option("--duration", o->duration, "Trace for this long from now (e.g. 10s)");
  steps->excludes(duration);
  c->footer(
      "Examples:\n  chokepoint run --trace=on-demand -o rec/ -- python train.py &\n"
      "  chokepoint trace --pid 4242 --steps 20\n  chokepoint trace --pid 4242 --duration 10s\n"
      "The window's file is rec/trace-<pid>-w<N>.cptrace; `chokepoint analyze rec/` reads every window, "
      "`chokepoint analyze rec/trace-<pid>-w<N>.cptrace` one. Only the job's user can ask (a 0600 unix socket in the "
      "recording; no network port).\n"
      "Exit status: 0 when every traced process took the request, 1 when one refused it or none could be asked, 2 "
      "on a usage error.");
  return [o] {
    if (o->steps == 0 && o->duration.empty()) {
      say("trace", "give --steps N or --duration D");
      return 2;
    }
    return run_trace(*o);
  };
}

}  // namespace chokepoint::cli
