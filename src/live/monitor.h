// The loop behind `run` and `watch`: start the recording, launch the command (run),
// tick the session every interval until the command exits, the watched process goes
// away, --duration passes or a signal says stop; show the live view on stderr; finish
// the recording. The CLI then builds the report from the directory.
//
// Signals. The child shares our process group, so a terminal's Ctrl-C reaches it
// directly; a SIGINT/SIGTERM/SIGHUP sent to chokepoint alone (kill, a batch system) is
// forwarded. `run` keeps sampling until the command has exited (its shutdown is part of
// the run); a third interrupt kills it (SIGKILL). `watch` stops at the first one.
// --duration ends `run` like nsys does: SIGTERM to the command, SIGKILL 10 s later.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "live/session.h"
#include "live/stack_sampling.h"
#include "live/view_input.h"

namespace chokepoint::live {

enum class ViewMode { kAuto, kPanel, kLines, kNone };

struct MonitorOptions {
  SessionOptions session;            // out_dir, intervals, gpu
  std::vector<std::string> command;  // run: the command; empty for watch
  std::optional<int64_t> watch_pid;  // watch --pid
  std::optional<int64_t> duration_ns;
  ViewMode view = ViewMode::kAuto;
  LiveRenderer renderer;       // draws the view (the CLI passes report::live_renderer())
  LiveVerdictFn live_verdict;  // the verdict so far, every live_verdict_interval_ns; unset: none
  int64_t live_verdict_interval_ns = 5'000'000'000;
  int64_t line_interval_ns = 5'000'000'000;  // plain-line mode: one line this often
  bool quiet = false;                        // no notes on stderr
  // run --trace: the CUPTI injection library to load into the command (set by the CLI;
  // empty: no tracing). The trace files land in the recording directory.
  std::string tracer_library;
  // The folder of the libcupti the tracer loads when the build's toolkit path has none
  // (PyTorch's nvidia-cuda-cupti wheel): appended to the command's LD_LIBRARY_PATH.
  std::string tracer_cupti_dir;
  // Its trace window (tracer/window.h, CHOKEPOINT_TRACE_WINDOW); "" the whole job.
  std::string trace_window;
  // Python stacks of the job through py-spy (run, watch --pid).
  StackOptions stacks;
  // run: the command's stdout and stderr into these files when set (else ours).
  std::string stdout_path, stderr_path;
  // Asked after every tick while the command runs: a non-empty answer (why) stops the
  // command as --duration does (`tune` ends a trial that measured enough or is clearly
  // worse). MonitorResult::stopped says why the command was stopped.
  std::function<std::string()> stop_check;
  int64_t kill_grace_ns = 10'000'000'000;  // SIGTERM, then SIGKILL this much later
};

struct MonitorResult {
  std::string dir;               // the recording
  std::optional<int> exit_code;  // the command's (run)
  int64_t ticks = 0;
  double elapsed_s = 0;
  double own_cpu_s = 0;      // chokepoint's CPU time while sampling, after the first tick
  double sampling_s = 0;     // wall time those seconds were spent over
  double startup_cpu_s = 0;  // loading NVML, the first tick
  bool interrupted = false;  // stopped by a signal
  std::string stopped;       // "duration", or stop_check's reason; "" when the command ended itself
};

// Fails when the recording cannot be created or the command cannot be started; once
// the command runs, problems writing the recording are reported but do not stop it.
Result<MonitorResult> monitor(const MonitorOptions& options);

}  // namespace chokepoint::live
