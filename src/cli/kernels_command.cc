// chokepoint kernels TRACE|REC|NCU_CSV [--top N]
// chokepoint kernels --ncu [--top N] -- CMD ...
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

#include "base/read_file.h"
#include "base/safe_write.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/output.h"
#include "importers/ncu/ncu_csv.h"
#include "live/child.h"
#include "pipeline/inputs.h"
#include "pipeline/kernels_pipeline.h"
#include "report/kernels_render.h"
#include "tracer/setup.h"

namespace chokepoint::cli {
namespace {

namespace fs = std::filesystem;

struct KernelsCliOptions {
  std::vector<std::string> args;  // inputs; with --ncu the command
  bool ncu = false;
  std::string ncu_path;
  std::string dir = "chokepoint-kernels";
  size_t top = 0;  // 0: 10 from files, 5 with --ncu
  std::string format = "text", output, color = "auto";
  bool quiet = false;
  std::string ceilings;
  bool no_saved_profile = false;
};

constexpr const char* kCmd = "kernels";

pipeline::KernelsOptions kernels_options(const KernelsCliOptions& o) {
  pipeline::KernelsOptions ko;
  ko.ceilings.file = o.ceilings;
  ko.ceilings.saved_profiles = !o.no_saved_profile;
  ko.top = o.top > 0 ? o.top : (o.ncu ? 5 : 10);
  return ko;
}

int write_view(const KernelsCliOptions& o, const analyses::KernelsView& v, const std::vector<std::string>& keep) {
  report::RenderOptions ro;
  ro.color = want_color(o.color, !o.output.empty() && o.output != "-");
  ro.width = text_width(ro.width);
  std::ostringstream text;
  if (Status s = report::render_kernels(v, o.format, ro, text); !s.ok()) {
    say(kCmd, s.message());
    return exit_status(s);
  }
  return write_output(kCmd, o.output, text.str(), o.quiet, keep) ? kExitOk : kExitFailed;
}

int run_files(const KernelsCliOptions& o) {
  const bool to_file = !o.output.empty() && o.output != "-";
  const std::vector<std::string> keep = to_file ? input_files(o.args) : std::vector<std::string>{};
  if (Status s = check_not_same_file(o.output, keep); !s.ok()) {
    say(kCmd, s.message());
    return exit_status(s);
  }
  auto v = pipeline::kernels_from_paths(o.args, kernels_options(o));
  if (!v.ok()) {
    say(kCmd, v.status().message());
    return exit_status(v.status());
  }
  return write_view(o, v.value(), keep);
}

// ncu: --ncu-path, else on PATH, else the CUDA toolkit's usual place; "" when none.
std::string find_ncu(const std::string& given) {
  if (!given.empty()) return ::access(given.c_str(), X_OK) == 0 ? given : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  dirs += ":/usr/local/cuda/bin";
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');) {
    if (d.empty()) continue;
    const std::string p = d + "/ncu";
    if (::access(p.c_str(), X_OK) == 0 && is_regular_file_path(p)) return p;
  }
  return "";
}

// A new directory for what the run leaves: DIR, else DIR.1, DIR.2 ...
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

// Step 1: the command under the CUPTI tracer; the trace files it left.
Result<std::vector<std::string>> traced_run(const KernelsCliOptions& o, const std::string& dir) {
  const std::string tracer = tracer::find_tracer_library();
  if (tracer.empty()) {
    return Status::Error(ErrorCode::kUnsupported,
                         "--ncu needs the CUPTI tracer, libchokepoint_tracer.so, next to the chokepoint executable "
                         "(or $CHOKEPOINT_TRACER_LIB)");
  }
  if (!o.quiet) say(kCmd, "1/2: tracing the command to find its top kernels (output in " + dir + "/trace.out)");
  auto rc = run_to_files(o.args, dir + "/trace.out", dir + "/trace.err",
                         {{"CUDA_INJECTION64_PATH", tracer}, {"CHOKEPOINT_TRACE_DIR", dir}});
  if (!rc.ok()) return rc.status();
  std::vector<std::string> files = pipeline::recording_trace_files(dir);
  if (rc.value() != 0) {
    say(kCmd, "the command exited with status " + std::to_string(rc.value()) + " in the traced run (its output: " +
                  dir + "/trace.out, trace.err)" + (files.empty() ? "" : "; going on with what it traced"));
  }
  if (files.empty()) {
    return Status::Error(ErrorCode::kInput,
                         "the traced run left no trace in " + dir +
                             ": the command launched no CUDA work (or another CUPTI client held it)");
  }
  return files;
}

// Step 2: ncu on each target; the metrics of those it measured.
int profile_targets(const KernelsCliOptions& o, const std::string& ncu, const std::string& dir,
                    const pipeline::NcuPlan& plan) {
  bool tensor = true;
  std::vector<pipeline::NcuTarget> done;
  std::vector<timeline::KernelMetrics> metrics;
  for (size_t i = 0; i < plan.targets.size(); ++i) {
    const auto& t = plan.targets[i];
    const std::string base = dir + "/ncu-" + std::to_string(i + 1);
    if (!o.quiet) {
      say(kCmd, "2/2: ncu on kernel " + std::to_string(i + 1) + "/" + std::to_string(plan.targets.size()) + " " +
                    t.function + " (launch " + std::to_string(t.launch_skip + 1) + " of its name)");
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto argv = pipeline::ncu_command_line(ncu, t, pipeline::ncu_metrics(tensor), o.args);
      auto rc = run_to_files(argv, base + ".csv", base + ".log");
      if (!rc.ok()) {
        say(kCmd, "cannot run ncu: " + rc.status().message());
        return kExitFailed;
      }
      auto f = importers::read_ncu_csv(base + ".csv");
      if (f.ok()) {
        done.push_back(t);
        metrics.push_back(f.value().kernels.front());
        break;
      }
      const std::string said = file_text(base + ".csv") + file_text(base + ".log");
      if (mentions(said, "ERR_NVGPUCTRPERM")) {
        say(kCmd,
            "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or let every user "
            "profile: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then reload the "
            "driver or reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM). The trace and ncu's output are in " +
                dir);
        return kExitFailed;
      }
      if (tensor && (mentions(said, "Failed to find metric") || mentions(said, "nvalid metric"))) {
        tensor = false;  // an older GPU or ncu without Hopper's tensor-path counters
        continue;
      }
      say(kCmd, "ncu measured nothing for " + t.function + " (exit " + std::to_string(rc.value()) + "; " +
                    f.status().message() + "); its output: " + base + ".csv, .log");
      break;
    }
  }
  if (metrics.empty()) {
    say(kCmd, "ncu measured none of the kernels; the trace and ncu's output are in " + dir);
    return kExitFailed;
  }
  analyses::KernelsView v = pipeline::kernels_from_plan(plan, done, metrics, {dir});
  if (!tensor) v.notes.push_back("ncu did not know the tensor-path FLOP counters: tensor FLOP/s not measured");
  v.notes.push_back("the traced run and ncu's exports are kept in " + dir);
  return write_view(o, v, {});
}

int run_ncu(const KernelsCliOptions& o) {
  if (o.args.empty()) {
    say(kCmd, "--ncu needs the command to profile, after -- (chokepoint kernels --ncu -- python train.py)");
    return kExitUsage;
  }
  const std::string ncu = find_ncu(o.ncu_path);
  if (ncu.empty()) {
    say(kCmd, o.ncu_path.empty() ? "ncu (Nsight Compute) is not on PATH nor in /usr/local/cuda/bin: install Nsight "
                                   "Compute (part of the CUDA toolkit) or name it with --ncu-path"
                                 : "--ncu-path " + o.ncu_path + " is not an executable file");
    return kExitFailed;
  }
  const pipeline::KernelsOptions ko = kernels_options(o);
  if (!o.ceilings.empty()) {  // an unreadable profile is a usage error, said before the job runs
    if (auto c = pipeline::resolve_machine_context({}, ko.ceilings); !c.ok()) {
      say(kCmd, c.status().message());
      return kExitUsage;
    }
  }
  auto dir = fresh_dir(o.dir);
  if (!dir.ok()) {
    say(kCmd, dir.status().message());
    return exit_status(dir.status());
  }
  auto files = traced_run(o, dir.value());
  if (!files.ok()) {
    say(kCmd, files.status().message());
    return exit_status(files.status());
  }
  auto plan = pipeline::plan_ncu(files.value(), ko);
  if (!plan.ok()) {
    say(kCmd, plan.status().message() + " (the trace is in " + dir.value() + ")");
    return exit_status(plan.status());
  }
  return profile_targets(o, ncu, dir.value(), plan.value());
}

}  // namespace

RunFn add_kernels_command(CLI::App& app) {
  auto o = std::make_shared<KernelsCliOptions>();
  auto* cmd = app.add_subcommand(
      "kernels",
      "The top kernels of a trace, a recording of `run --trace` or an Nsight Compute CSV export, each placed on this "
      "machine's roofline (achieved FLOP/s and DRAM bandwidth against the ceilings), classified memory-bound, "
      "compute-bound or latency/occupancy-bound, with the advice that fits. --ncu: trace a short run of a command, "
      "then measure its top kernels with Nsight Compute (ncu).");
  cmd->add_option("args", o->args,
                  "Trace files, a recording directory or `ncu --csv --page raw` exports; with --ncu, the command to "
                  "profile, after --");
  cmd->add_flag("--ncu", o->ncu,
                "Run the command once under chokepoint's tracer to find its top kernels, then once per kernel under "
                "ncu (--clock-control none, -k regex:NAME --launch-skip S --launch-count 1) and report its counters");
  cmd->add_option("--ncu-path", o->ncu_path, "The ncu executable (default: ncu on PATH)");
  cmd->add_option("--dir", o->dir,
                  "--ncu: where the traced run and ncu's exports are kept (a new directory: DIR, else DIR.1 ...)")
      ->capture_default_str();
  cmd->add_option("-n,--top", o->top, "How many kernels, most time first (default 10; with --ncu 5)")
      ->check(CLI::Range(1, 1000));
  add_format_option(cmd, &o->format, report::kKernelsFormats,
                    "Report format: " + report::format_names(report::kKernelsFormats));
  cmd->add_option("-o,--output", o->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--color", o->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "No progress or notes on stderr");
  add_ceilings_options(cmd, &o->ceilings, &o->no_saved_profile);
  cmd->footer(
      "Examples:\n  chokepoint kernels run/ --top 5\n"
      "  chokepoint kernels profile.csv                       # ncu --csv --page raw ... > profile.csv\n"
      "  chokepoint kernels --ncu --top 3 -- python train.py --steps 20\n"
      "Exit status: 0 report written, 1 input unreadable or ncu failed (what ran is kept in --dir), 2 usage error.");
  return [o] {
    if (o->ncu) return run_ncu(*o);
    if (o->args.empty()) {
      say(kCmd, "give a trace, a recording or an ncu CSV export (or --ncu -- CMD)");
      return kExitUsage;
    }
    return run_files(*o);
  };
}

}  // namespace chokepoint::cli
