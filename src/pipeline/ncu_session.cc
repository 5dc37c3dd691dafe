#include "pipeline/ncu_session.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "base/read_file.h"
#include "importers/ncu/ncu_csv.h"
#include "live/child.h"
#include "pipeline/inputs.h"
#include "tracer/setup.h"

namespace chokepoint::pipeline {
namespace fs = std::filesystem;

namespace {

// Runs argv with its stdout and stderr in files; its exit status.
Result<int> run_to_files(const std::vector<std::string>& argv, const std::string& out, const std::string& err,
                         const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::vector<std::string> sh = {"/bin/sh", "-c", "out=$1; err=$2; shift 2; exec \"$@\" > \"$out\" 2> \"$err\"",
                                 "sh",      out,  err};
  sh.insert(sh.end(), argv.begin(), argv.end());
  auto child = live::Child::spawn(sh, env);
  if (!child.ok()) return child.status();
  return child.value().wait();
}

std::string file_text(const std::string& path) {
  auto t = read_regular_file(path);
  return t.ok() ? t.value() : std::string();
}

bool mentions(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

void progress(const SayFn& say, const std::string& line) {
  if (say) say(line, true);
}
void warn(const SayFn& say, const std::string& line) {
  if (say) say(line, false);
}

// Step 1: the command under the CUPTI tracer; the trace files it left.
Result<std::vector<std::string>> traced_run(const NcuSessionOptions& o, const SayFn& say) {
  const std::string tracer = tracer::find_tracer_library();
  if (tracer.empty()) {
    return Status::Error(ErrorCode::kUnsupported,
                         "--ncu needs the CUPTI tracer, libchokepoint_tracer.so, next to the chokepoint executable "
                         "(or $CHOKEPOINT_TRACER_LIB)");
  }
  progress(say, "1/2: tracing the command to find its top kernels (output in " + o.dir + "/trace.out)");
  auto rc = run_to_files(o.command, o.dir + "/trace.out", o.dir + "/trace.err",
                         {{"CUDA_INJECTION64_PATH", tracer}, {"CHOKEPOINT_TRACE_DIR", o.dir}});
  if (!rc.ok()) return rc.status();
  std::vector<std::string> files = recording_trace_files(o.dir);
  if (rc.value() != 0) {
    warn(say, "the command exited with status " + std::to_string(rc.value()) + " in the traced run (its output: " +
                  o.dir + "/trace.out, trace.err)" + (files.empty() ? "" : "; going on with what it traced"));
  }
  if (files.empty()) {
    return Status::Error(ErrorCode::kInput,
                         "the traced run left no trace in " + o.dir +
                             ": the command launched no CUDA work (or another CUPTI client held it)");
  }
  return files;
}

}  // namespace

std::string find_ncu(const std::string& given, const std::string& path_env) {
  if (!given.empty()) return ::access(given.c_str(), X_OK) == 0 ? given : std::string();
  std::stringstream ss(path_env + ":/usr/local/cuda/bin");
  for (std::string d; std::getline(ss, d, ':');) {
    if (d.empty()) continue;
    const std::string p = d + "/ncu";
    if (::access(p.c_str(), X_OK) == 0 && is_regular_file_path(p)) return p;
  }
  return "";
}

Result<std::string> fresh_dir(const std::string& base) {
  std::error_code ec;
  for (int i = 0; i < 1000; ++i) {
    const std::string d = i == 0 ? base : base + "." + std::to_string(i);
    if (fs::exists(d, ec)) continue;
    if (!fs::create_directories(d, ec))
      return Status::Error(ErrorCode::kIo, "cannot create '" + d + "': " + ec.message());
    return fs::absolute(d, ec).string();
  }
  return Status::Error(ErrorCode::kIo, "no free directory name like '" + base + "'");
}

Result<analyses::KernelsView> run_ncu_session(const NcuSessionOptions& o, const SayFn& say) {
  auto files = traced_run(o, say);
  if (!files.ok()) return files.status();
  auto plan = plan_ncu(files.value(), o.kernels);
  if (!plan.ok())
    return Status::Error(plan.status().code(), plan.status().message() + " (the trace is in " + o.dir + ")");
  // Step 2: ncu on each target; the metrics of those it measured.
  bool tensor = true;
  std::vector<NcuTarget> done;
  std::vector<timeline::KernelMetrics> metrics;
  const auto& targets = plan.value().targets;
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& t = targets[i];
    const std::string base = o.dir + "/ncu-" + std::to_string(i + 1);
    progress(say, "2/2: ncu on kernel " + std::to_string(i + 1) + "/" + std::to_string(targets.size()) + " " +
                      t.function + " (launch " + std::to_string(t.launch_skip + 1) + " of its name)");
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto rc = run_to_files(ncu_command_line(o.ncu, t, ncu_metrics(tensor), o.command), base + ".csv", base + ".log");
      if (!rc.ok()) return Status::Error(ErrorCode::kFailed, "cannot run ncu: " + rc.status().message());
      auto f = importers::read_ncu_csv(base + ".csv");
      if (f.ok()) {
        done.push_back(t);
        metrics.push_back(f.value().kernels.front());
        break;
      }
      const std::string said = file_text(base + ".csv") + file_text(base + ".log");
      if (mentions(said, "ERR_NVGPUCTRPERM")) {
        return Status::Error(
            ErrorCode::kFailed,
            "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or let every user "
            "profile: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then reload the "
            "driver or reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM). The trace and ncu's output are in " +
                o.dir);
      }
      if (tensor && (mentions(said, "Failed to find metric") || mentions(said, "nvalid metric"))) {
        tensor = false;  // an older GPU or ncu without Hopper's tensor-path counters
        continue;
      }
      warn(say, "ncu measured nothing for " + t.function + " (exit " + std::to_string(rc.value()) + "; " +
                    f.status().message() + "); its output: " + base + ".csv, .log");
      break;
    }
  }
  if (metrics.empty()) {
    return Status::Error(ErrorCode::kFailed,
                         "ncu measured none of the kernels; the trace and ncu's output are in " + o.dir);
  }
  analyses::KernelsView v = kernels_from_plan(plan.value(), done, metrics, {o.dir});
  if (!tensor) v.notes.push_back("ncu did not know the tensor-path FLOP counters: tensor FLOP/s not measured");
  v.notes.push_back("the traced run and ncu's exports are kept in " + o.dir);
  return v;
}

}  // namespace chokepoint::pipeline
