// chokepoint serve [--listen 127.0.0.1:9400]: the Prometheus exporter of this node (one
// per node, like dcgm-exporter and node_exporter). docs/SERVE.md.
#include <signal.h>

#include <cerrno>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/output.h"
#include "serve/server.h"

namespace chokepoint::cli {
namespace {

struct ServeCliOptions {
  std::string listen = "127.0.0.1:9400";
  std::string interval = "1s", window = "60s", diagnose_every = "5s";
  size_t max_jobs = 32;
  std::vector<int64_t> pids;
  bool no_gpu = false;
  bool quiet = false;
};

bool duration(const std::string& flag, const std::string& text, int64_t min_ns, int64_t* out) {
  const auto v = parse_duration_ns(text);
  if (!v || *v < min_ns) {
    say("serve", flag + " '" + text + "' is not a duration of at least " + std::to_string(min_ns / 1'000'000) +
                     " ms (e.g. 1s, 500ms)");
    return false;
  }
  *out = *v;
  return true;
}

int run_serve(const ServeCliOptions& o) {
  serve::ServeOptions so;
  so.listen = o.listen;
  serve::NodeOptions& n = so.node;
  if (!duration("--interval", o.interval, 100'000'000, &n.interval_ns) ||
      !duration("--window", o.window, 1'000'000'000, &n.window_ns) ||
      !duration("--diagnose-every", o.diagnose_every, 100'000'000, &n.diagnose_interval_ns)) {
    return kExitUsage;
  }
  if (n.window_ns < 2 * n.interval_ns) {
    say("serve", "--window must hold at least two --interval periods");
    return kExitUsage;
  }
  if (o.max_jobs == 0) {
    say("serve", "--max-jobs must be at least 1");
    return kExitUsage;
  }
  for (int64_t pid : o.pids) {
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) {
      say("serve", "--pid " + std::to_string(pid) + ": no such process");
      return kExitUsage;
    }
  }
  n.max_jobs = o.max_jobs;
  n.pids = o.pids;
  n.gpu = !o.no_gpu;
  const bool quiet = o.quiet;
  so.on_listening = [quiet](const std::string& url) {
    if (!quiet) std::fprintf(stderr, "chokepoint serve: listening on %s (Ctrl-C stops)\n", url.c_str());
  };
  const Status st = serve::serve(so);
  if (!st.ok()) {
    say("serve", st.message());
    return st.code() == ErrorCode::kUsage ? kExitUsage : 1;
  }
  if (!quiet) std::fprintf(stderr, "chokepoint serve: stopped\n");
  return 0;
}

}  // namespace

RunFn add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeCliOptions>();
  auto* c = app.add_subcommand("serve",
                               "Prometheus exporter for this node (one per node, like dcgm-exporter): GPU metrics "
                               "under dcgm-exporter's names, host and per-job process metrics, and each job's live "
                               "diagnosis (bound category, active findings) as metrics.");
  c->add_option("--listen", o->listen, "HOST:PORT to serve /metrics on (default 127.0.0.1:9400; port 0: any free one)");
  c->add_option("--interval", o->interval, "Sampling period (default 1s)");
  c->add_option("--window", o->window, "Window each job's diagnosis covers (default 60s)");
  c->add_option("--diagnose-every", o->diagnose_every, "How often each job is diagnosed again (default 5s)");
  c->add_option("--max-jobs", o->max_jobs, "Jobs followed at most; more are counted, not followed (default 32)");
  c->add_option("--pid", o->pids, "Also follow this process tree as a job, GPU or not (repeatable)");
  c->add_flag("--no-gpu", o->no_gpu, "Do not load NVML");
  c->add_flag("-q,--quiet", o->quiet, "No notes on stderr");
  c->footer(
      "Examples:\n  chokepoint serve\n  chokepoint serve --listen 0.0.0.0:9400   (reachable from other hosts)\n"
      "Read-only: GET /metrics and /. SIGINT or SIGTERM stops it.\n"
      "Exit status: 0 after a stop signal, 1 when it cannot listen, 2 on a usage error.");
  return [o] { return run_serve(*o); };
}

}  // namespace chokepoint::cli
