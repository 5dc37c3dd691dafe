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
#include "pipeline/inputs.h"
#include "pipeline/kernels_pipeline.h"
#include "pipeline/ncu_session.h"
#include "report/kernels_render.h"

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

int run_ncu(const KernelsCliOptions& o) {
  if (o.args.empty()) {
    say(kCmd, "--ncu needs the command to profile, after -- (chokepoint kernels --ncu -- python train.py)");
    return kExitUsage;
  }
  const char* path = std::getenv("PATH");
  const std::string ncu = pipeline::find_ncu(o.ncu_path, path != nullptr ? path : "");
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
  pipeline::NcuSessionOptions so;
  so.command = o.args;
  so.ncu = ncu;
  so.kernels = ko;
  auto dir = pipeline::fresh_dir(o.dir);
  if (!dir.ok()) {
    say(kCmd, dir.status().message());
    return exit_status(dir.status());
  }
  so.dir = dir.value();
  auto v = pipeline::run_ncu_session(so, [&o](const std::string& line, bool progress) {
    if (!progress || !o.quiet) say(kCmd, line);
  });
  if (!v.ok()) {
    say(kCmd, v.status().message());
    return exit_status(v.status());
  }
  return write_view(o, v.value(), {});
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
