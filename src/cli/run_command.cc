// chokepoint run [options] -- COMMAND ...   and   chokepoint watch [--pid PID]
// Both sample GPU and host live into a recording, show the live view on stderr, and end
// with the report of the recording on stderr (and in --report FILE).
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "base/terminal_text.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/output.h"
#include "cli/pid_option.h"
#include "live/monitor.h"
#include "pipeline/burst_steps.h"
#include "pipeline/live_report.h"
#include "report/live_panel.h"
#include "report/reporter.h"
#include "samples/clock.h"
#include "samples/recording_writer.h"
#include "tracer/setup.h"
#include "tracer/window_options.h"

namespace chokepoint::cli {

namespace {

struct LiveOptions {
  std::vector<std::string> command;
  int64_t pid = 0;
  std::string interval = "100ms", gpu_interval = "200ms", gpm_interval = "1s", duration;
  std::string output;  // recording directory
  std::string report_file, format = "text", color = "auto", view = "auto";
  bool no_gpu = false, quiet = false, force = false;
  std::string trace;  // --trace[=whole|on-demand]; "" without
  std::string trace_steps, trace_time, trace_every;
  std::string ceilings;  // --ceilings FILE
  bool no_saved_profile = false;
  bool no_stacks = false;
  bool timings = false;  // --timings: the reports also say how long the analysis took
  std::string pyspy;
  double stack_rate = 20;
  double stack_burst = 500;
  bool stack_subprocesses = false;
};

bool parse_interval(const char* cmd, const char* flag, const std::string& text, int64_t min_ns, int64_t* out) {
  const auto v = parse_duration_ns(text);
  if (!v || *v < min_ns) {
    std::fprintf(stderr, "chokepoint %s: %s '%s' is not a duration of at least %g ms (e.g. 100ms, 1s)\n", cmd, flag,
                 text.c_str(), static_cast<double>(min_ns) / 1e6);
    return false;
  }
  *out = *v;
  return true;
}

// Said before the job starts: a recording already in DIR is never overwritten without
// --force, and --report must not name one of the recording's own files.
bool check_destinations(const char* cmd, const std::string& dir, const std::string& report, bool force) {
  namespace fs = std::filesystem;
  const std::vector<std::string> old = samples::existing_recording_files(dir);
  if (!old.empty() && !force) {
    std::string names;
    for (const std::string& n : old) names += (names.empty() ? "" : ", ") + n;
    say(cmd, dir + " already holds a recording (" + names +
                 "); not overwriting it: choose another -o directory, or pass --force to replace it");
    return false;
  }
  if (report.empty() || report == "-") return true;
  std::error_code ec1, ec2, ec3;
  const fs::path report_dir = fs::weakly_canonical(fs::absolute(report).parent_path(), ec1);
  const fs::path rec_dir = fs::weakly_canonical(fs::absolute(dir), ec2);
  const std::string name = fs::path(report).filename().string();
  if (!ec1 && !ec2 && report_dir == rec_dir && samples::is_recording_file_name(name)) {
    say(cmd, "refusing to write the report to " + report + ": it is the recording's own " + name + " in " + dir +
                 ", which the report would replace; choose another --report path");
    return false;
  }
  // Where the report goes must be writable before the job starts, not found out after it
  // ran (the recording's directory itself is created when the run starts).
  if (name.empty() || name == "." || name == ".." || fs::is_directory(report, ec3)) {
    say(cmd, "--report " + report + " is a directory; give a file name");
    return false;
  }
  // The report is never written through a link (base/safe_write.h); say so now, not after
  // the job ran and its report is lost (issue 47).
  if (fs::is_symlink(fs::symlink_status(report, ec3))) {
    say(cmd, "refusing to write the report to " + report +
                 ": it is a symbolic link, which is never followed for writing; give the file's own path");
    return false;
  }
  if (!ec1 && !ec2 && report_dir == rec_dir) return true;
  const std::string parent = report_dir.empty() ? "." : report_dir.string();
  if (ec1 || !fs::is_directory(parent, ec3)) {
    say(cmd, "cannot write the report to " + report + ": no directory " + fs::path(report).parent_path().string());
    return false;
  }
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    say(cmd, "cannot write the report to " + report + ": " + fs::path(parent).string() + " is not writable (" +
                 std::strerror(errno) + ")");
    return false;
  }
  return true;
}

bool tracing(const LiveOptions& o) {
  return !o.trace.empty() || !o.trace_steps.empty() || !o.trace_time.empty() || !o.trace_every.empty();
}

// The trace window the options ask for, as CHOKEPOINT_TRACE_WINDOW says it ("" for the
// whole job); nullopt (said) on a usage error.
std::optional<std::string> trace_window(const char* cmd, const LiveOptions& o) {
  auto w = tracer::window_from_options({.trace = o.trace,
                                        .steps = o.trace_steps,
                                        .time = o.trace_time,
                                        .every = o.trace_every,
                                        .first_word = o.command.empty() ? "" : o.command[0]});
  if (!w.ok()) {
    say(cmd, w.status().message());
    return std::nullopt;
  }
  return w.value();
}

// The tracer --trace needs (tracer::resolve_trace_setup), with what the user is told;
// nullopt (said) when there is no library. Without --trace: empty.
std::optional<tracer::TraceSetup> trace_setup(const char* cmd, const LiveOptions& o) {
  if (!tracing(o)) return tracer::TraceSetup{};
  const char* path = std::getenv("PATH");
  tracer::TraceSetup t = tracer::resolve_trace_setup(o.command, path != nullptr ? path : "");
  using Outcome = tracer::TraceSetup::Outcome;
  if (t.outcome == Outcome::kNoLibrary) {
    std::fprintf(stderr,
                 "chokepoint %s: --trace needs the CUPTI tracer, libchokepoint_tracer.so, next to the chokepoint "
                 "executable (or at $CHOKEPOINT_TRACER_LIB), and there is none: this build found no CUDA toolkit "
                 "with CUPTI. Install the CUDA toolkit (e.g. /usr/local/cuda) and build again (bash scripts/build.sh, "
                 "or cmake -DCUDAToolkit_ROOT=DIR), or set CHOKEPOINT_TRACER_LIB to a built "
                 "libchokepoint_tracer.so\n",
                 cmd);
    return std::nullopt;
  }
  if (t.outcome == Outcome::kWheelCupti && !o.quiet) {
    std::fprintf(stderr, "chokepoint %s: --trace: CUPTI from the job's Python environment: %s\n", cmd,
                 escape_controls(t.wheel).c_str());
  }
  if (t.outcome == Outcome::kUnsure && !o.quiet) {
    const std::string need = t.probe.cupti_soname.empty() ? "its CUPTI library" : t.probe.cupti_soname;
    const std::string where = t.python.empty() ? "" : " (" + escape_controls(t.python) + ")";
    std::fprintf(stderr,
                 "chokepoint %s: --trace: the tracer %s does not load here on its own: %s. It needs %s: unless "
                 "the job loads one itself (PyTorch does), there will be no trace. Install the CUDA toolkit of "
                 "that version, or the nvidia-cuda-cupti wheel in the job's Python environment%s; `chokepoint "
                 "doctor` checks this\n",
                 cmd, escape_controls(t.library).c_str(), escape_controls(t.probe.error).c_str(), need.c_str(),
                 where.c_str());
  }
  return t;
}

// The monitor's options from the command line; false (said) on a usage error.
bool monitor_options(const char* cmd, const LiveOptions& o, const tracer::TraceSetup& tracer,
                     live::MonitorOptions& mo) {
  if (tracing(o)) {
    const std::optional<std::string> window = trace_window(cmd, o);
    if (!window) return false;
    mo.trace_window = *window;
  }
  if (!parse_interval(cmd, "--interval", o.interval, 10'000'000, &mo.session.interval_ns) ||
      !parse_interval(cmd, "--gpu-interval", o.gpu_interval, 10'000'000, &mo.session.gpu_interval_ns) ||
      !parse_interval(cmd, "--gpm-interval", o.gpm_interval, 100'000'000, &mo.session.gpm_interval_ns)) {
    return false;
  }
  if (!o.duration.empty()) {
    int64_t d = 0;
    if (!parse_interval(cmd, "--duration", o.duration, 1, &d)) return false;
    mo.duration_ns = d;
  }
  mo.session.out_dir = o.output.empty() ? samples::default_recording_dir(samples::clock_ns(CLOCK_REALTIME)) : o.output;
  mo.session.replace = o.force;
  if (!check_destinations(cmd, mo.session.out_dir, o.report_file, o.force)) return false;
  mo.session.gpu = !o.no_gpu;
  mo.command = o.command;
  mo.tracer_library = tracer.library;
  mo.tracer_cupti_dir = tracer.cupti_dir;
  if (o.pid > 0) mo.watch_pid = o.pid;
  mo.stacks.enabled = !o.no_stacks;
  mo.stacks.pyspy = o.pyspy;
  mo.stacks.rate_hz = o.stack_rate;
  mo.stacks.burst_hz = o.stack_burst;
  mo.stacks.subprocesses = o.stack_subprocesses;
  // After each burst: did it go round the job's loop, and do the bursts count its steps yet.
  mo.stacks.judge = [reader = std::make_shared<pipeline::BurstLoopReader>()](
                        const std::string& dir, const std::vector<samples::StackBurst>& bursts) {
    const pipeline::BurstLoop l = reader->read(dir, bursts);
    return live::BurstSteps{l.loop_in_last, l.sure};
  };
  mo.quiet = o.quiet;
  mo.view = o.view == "panel"   ? live::ViewMode::kPanel
            : o.view == "lines" ? live::ViewMode::kLines
            : o.view == "none"  ? live::ViewMode::kNone
                                : live::ViewMode::kAuto;
  if (o.quiet && o.view == "auto") mo.view = live::ViewMode::kNone;
  mo.renderer = report::live_renderer();
  if (mo.view != live::ViewMode::kNone) mo.live_verdict = pipeline::live_verdict_line;
  return true;
}

// The text report and a line about the recording, on stderr.
void print_live_report(const LiveOptions& o, const report::Report& rep, const live::MonitorResult& m) {
  report::RenderOptions ro;
  ro.color = want_color_on(o.color, false, STDERR_FILENO);
  ro.width = text_width(ro.width);
  ro.timings = o.timings;
  std::ostringstream text;
  if (report::make_reporter("text")->write(rep, text, ro).ok()) {
    std::fprintf(stderr, "\n%s", text.str().c_str());
  }
  std::fprintf(
      stderr, "chokepoint: recording in %s/ (%lld ticks, %.1f s; sampling used %.2f%% of one CPU, startup %.0f ms)%s\n",
      escape_controls(m.dir).c_str(), static_cast<long long>(m.ticks), m.elapsed_s,
      m.sampling_s > 0 ? 100.0 * m.own_cpu_s / m.sampling_s : 0.0, 1e3 * m.startup_cpu_s,
      m.exit_code ? (" ; the command exited with " + std::to_string(*m.exit_code)).c_str() : "");
}

int run_live(const char* cmd, const LiveOptions& o) {
  const std::optional<tracer::TraceSetup> tracer = trace_setup(cmd, o);
  if (!tracer) return kExitWrapperFailed;
  auto reporter = report::make_reporter(o.format);  // add_format_option checked the name
  if (!reporter) {
    say(cmd, report::parse_format(o.format, report::kAnalyzeFormats).status().message());
    return 2;
  }
  pipeline::AnalyzeOptions ao;
  ao.ceilings.file = o.ceilings;
  ao.ceilings.saved_profiles = !o.no_saved_profile;
  if (!o.ceilings.empty()) {  // an unreadable profile is a usage error, said before the job starts
    if (auto c = pipeline::resolve_machine_context({}, ao.ceilings); !c.ok()) {
      say(cmd, c.status().message());
      return 2;
    }
  }
  if (!o.pyspy.empty() && ::access(o.pyspy.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "chokepoint %s: --py-spy %s is not an executable file\n", cmd,
                 escape_controls(o.pyspy).c_str());
    return 2;
  }
  live::MonitorOptions mo;
  if (!monitor_options(cmd, o, *tracer, mo)) return 2;

  auto result = live::monitor(mo);
  if (!result.ok()) {
    say(cmd, result.status().message());
    // watch: 0/1/2; run: 127 when the command cannot be started, else 125 (cli/exit_status.h).
    return exit_status(result.status(), o.command.empty() ? ExitConvention::kTool : ExitConvention::kWrapper);
  }
  const live::MonitorResult& m = result.value();
  const int exit_code = m.exit_code.value_or(0);

  // The report, from the recording as saved: the same as `chokepoint analyze DIR`.
  auto rep = pipeline::analyze_recording_dir(m.dir, ao);
  if (!rep.ok()) {
    say(cmd, "cannot analyze " + m.dir + ": " + rep.status().message());
    return o.command.empty() ? 1 : exit_code;
  }
  if (!o.quiet) print_live_report(o, rep.value(), m);
  if (!o.report_file.empty()) {
    report::RenderOptions ro;
    ro.color = false;
    ro.timings = o.timings;
    std::ostringstream out;
    if (!reporter->write(rep.value(), out, ro).ok() ||
        !write_output(cmd, o.report_file, out.str(), o.quiet, input_files({m.dir}))) {
      if (o.command.empty()) return 1;
    }
  }
  return o.command.empty() ? 0 : exit_code;
}

void add_common(CLI::App* c, LiveOptions* o) {
  c->add_option("-o,--output", o->output,
                "Recording directory (default ./chokepoint-YYYYMMDD-HHMMSS/); one that already holds a recording "
                "is refused unless --force");
  c->add_flag(
      "--force", o->force,
      "Replace a recording already in the -o directory (its meta.json, samples.jsonl, trace-*.cptrace and Python stack "
      "files are removed first)");
  c->add_option("--duration", o->duration, "Stop after this long (e.g. 60s, 5m)");
  c->add_option("--interval", o->interval, "Host (/proc) sampling interval")->capture_default_str();
  c->add_option("--gpu-interval", o->gpu_interval, "NVML sampling interval")->capture_default_str();
  c->add_option("--gpm-interval", o->gpm_interval, "GPM (SM/tensor/DRAM activity) interval, >= 100ms")
      ->capture_default_str();
  c->add_option("--report", o->report_file,
                "Also write the report to FILE (refused when FILE is a symbolic link or a file of the recording)");
  add_format_option(c, &o->format, report::kAnalyzeFormats,
                    "Format of --report: " + report::format_names(report::kAnalyzeFormats));
  c->add_option("--view", o->view, "Live view: auto (panel on a terminal, lines otherwise), panel, lines, none")
      ->check(CLI::IsMember({"auto", "panel", "lines", "none"}))
      ->capture_default_str();
  c->add_option("--color", o->color, "Colour of the report: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  c->add_flag("--no-gpu", o->no_gpu, "Do not load NVML: host and process signals only");
  c->add_flag("-q,--quiet", o->quiet,
              "No live view, notes or report on stderr (the recording and --report still happen)");
  add_ceilings_options(c, &o->ceilings, &o->no_saved_profile);
  c->add_flag("--timings", o->timings, "Also report how long the analysis took");
  c->add_flag("--no-stacks", o->no_stacks, "Do not sample the job's Python stacks (py-spy)");
  c->add_option("--py-spy", o->pyspy, "py-spy to sample Python stacks with (default: $CHOKEPOINT_PY_SPY, else PATH)");
  c->add_option("--stack-rate", o->stack_rate, "Python stack samples per second")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  c->add_option("--stack-burst", o->stack_burst,
                "Rate of the short bursts of Python stack samples that count the job's iterations when there is no "
                "trace (2 s each: once the GPU has been busy 1 s, then 4 s, 14 s and 34 s later, then every minute; "
                "sooner again after one that found the job standing still; 0: none)")
      ->check(CLI::Range(0.0, 2000.0))
      ->capture_default_str();
  c->add_flag("--stack-subprocesses", o->stack_subprocesses,
              "Also sample the Python stacks of the job's child processes (DataLoader workers; costs py-spy "
              "about as much CPU per process)");
}

}  // namespace

RunFn add_run_command(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  auto* c = app.add_subcommand(
      "run",
      "Launch a command and watch it: GPU (NVML, GPM) and host (/proc) signals sampled live into "
      "a recording, a live view on stderr, and a diagnosis at the end.");
  add_common(c, o.get());
  c->add_flag("--trace{whole}", o->trace,
              "Also trace the command's CUDA activity through CUPTI (kernels, copies, memsets, syncs, the "
              "launch/copy/sync/allocation API calls, NVTX ranges; no code change), one trace-<pid>.cptrace per "
              "process: the report then draws on the trace too, per step (NVTX ranges named like 'step N', else "
              "steps inferred from the repeating GPU work). --trace=on-demand: load the tracer idle and trace a "
              "window when `chokepoint trace --pid PID` asks");
  c->add_option("--trace-steps", o->trace_steps,
                "Trace only a window of steps: after WARMUP steps, the next COUNT (e.g. 100:20; implies --trace). "
                "Steps are NVTX ranges named like 'step N', else host synchronizations (torch.cuda.synchronize(), "
                ".item()); one trace-<pid>-w<N>.cptrace per window")
      ->type_name("WARMUP:COUNT");
  c->add_option("--trace-time", o->trace_time,
                "Trace only a window of time: from START after CUDA starts, for LENGTH (e.g. 60s:10s; implies "
                "--trace)")
      ->type_name("START:LENGTH");
  c->add_option("--trace-every", o->trace_every,
                "Repeat the --trace-steps or --trace-time window this often (e.g. 10m): each window its own file")
      ->type_name("INTERVAL");
  c->add_option("command", o->command, "The command to run, after --")->required();
  c->footer(
      "Examples:\n  chokepoint run -- python train.py --epochs 1\n"
      "  chokepoint run --duration 60s -o rec/ --report report.json -f json -- torchrun --nproc-per-node 2 train.py\n"
      "  chokepoint run --trace -o rec/ -- python train.py && chokepoint analyze rec/ --format chrome -o trace.json\n"
      "  chokepoint run --trace-steps 500:20 --trace-every 10m -o rec/ -- python train.py   # 20 steps every 10 "
      "minutes, untraced in between\n"
      "  chokepoint run --trace=on-demand -o rec/ -- python train.py &  chokepoint trace --pid PID --steps 20\n"
      "The command keeps its stdin, stdout and stderr; SIGINT/SIGTERM/SIGHUP sent to chokepoint are forwarded to it.\n"
      "--trace holds the process's one CUPTI client: a torch.profiler in the same job then records CPU ops only. "
      "CHOKEPOINT_TRACE_DRIVER=0 leaves driver API calls out, CHOKEPOINT_TRACE_API=0 all API calls, "
      "CHOKEPOINT_TRACE_ALL_API=1 records every API call.\n"
      "Exit status: the command's; 127 when it cannot be started, 125 when chokepoint fails before it starts, "
      "2 on a usage error.");
  return [o] { return run_live("run", *o); };
}

RunFn add_watch_command(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  auto* c = app.add_subcommand("watch",
                               "Watch a running job (or all GPUs) without launching anything: the same live view, "
                               "recording and diagnosis as run. Stops at Ctrl-C, --duration, or when --pid exits.");
  add_common(c, o.get());
  c->add_option("--pid", o->pid, "The process to watch, with its children (default: no process, all GPUs)")
      ->check(pid_validator());
  c->footer(
      "Examples:\n  chokepoint watch --pid 4242\n  chokepoint watch --duration 30s --report r.md -f md\n"
      "Exit status: 0 when the report was written, 1 when not, 2 on a usage error.");
  return [o] { return run_live("watch", *o); };
}

}  // namespace chokepoint::cli
