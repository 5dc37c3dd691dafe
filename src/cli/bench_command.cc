// chokepoint bench [--quick | --selftest] [--format text|json] [-o FILE] [--save] [--device N] [--only KEY]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_run.h"
#include "bench/judge.h"
#include "bench/module_loader.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "machine/profile_store.h"
#include "report/bench_render.h"
#include "rules/diagnose.h"

namespace chokepoint::cli {
namespace {

struct BenchCliOptions {
  bool quick = false;
  bool selftest = false;
  std::string format = "text";
  bool json = false;  // --json, the same as --format json
  bool save = false;
  bool list = false;
  bool notes = false;
  bool quiet = false;
  std::string output;  // empty: stdout
  std::string show;    // render this saved profile instead of measuring
  std::string color = "auto";
  std::vector<int> devices;
  std::vector<std::string> only;
};

// One line per testcase on stderr; on a terminal the line is rewritten in place.
struct ProgressPrinter {
  bool enabled = false;
  bool tty = false;
  bool printed = false;
  void operator()(int done, int total, const std::string& label) {
    if (!enabled) return;
    printed = true;
    if (tty) {
      std::fprintf(stderr, "\r\033[Kchokepoint bench: [%d/%d] %.100s", done + 1, total, label.c_str());
    } else {
      std::fprintf(stderr, "chokepoint bench: [%d/%d] %s\n", done + 1, total, label.c_str());
    }
    std::fflush(stderr);
  }
  void finish() const {
    if (printed && tty) std::fprintf(stderr, "\r\033[K");
  }
};

int print_testcases(const bench::BenchModule& module) {
  auto list = bench::list_testcases(module);
  if (!list.ok()) {
    say("bench", list.status().message());
    return 1;
  }
  for (const auto& t : list.value()) {
    std::printf("%-26s %-9s %s%s\n", t.key.c_str(), t.unit.c_str(), t.selftest ? "[selftest] " : "",
                t.description.c_str());
  }
  return 0;
}

int save_profiles(const machine::Profile& p, bool quiet) {
  auto saved = bench::save_profiles(p);
  if (!saved.ok()) {
    say("bench", saved.status().message());
    return 1;
  }
  for (const std::string& path : saved.value()) {
    if (!quiet) {
      std::fprintf(stderr, "chokepoint bench: saved the profile to %s; analyze and run use its ceilings\n",
                   path.c_str());
    }
  }
  return 0;
}

// Writes the report (text or JSON) to stdout or -o FILE.
int emit(const BenchCliOptions& o, const machine::Profile& p) {
  const report::Format format = o.json ? report::Format::kJson
                                       : report::parse_format(o.format, report::kBenchFormats).value();
  report::RenderOptions to;
  to.color = want_color(o.color, !o.output.empty() && o.output != "-");
  to.notes = o.notes || o.selftest || p.mode == "selftest";
  to.width = text_width(to.width);
  return write_output("bench", o.output, report::render_bench(p, format, to), o.quiet) ? 0 : 1;
}

// --show FILE: a saved profile, judged again with this version's rules, no GPU needed.
int show_profile(const BenchCliOptions& o) {
  auto p = machine::load_profile(o.show);
  if (!p.ok()) {
    say("bench", p.status().message());
    return 1;
  }
  if (!p->error.empty()) {
    say("bench", o.show + ": " + p->error);
    return 1;
  }
  bench::judge(p.value(), rules::bench_causes);
  return emit(o, p.value());
}

int run_bench(const BenchCliOptions& o) {
  if (!o.show.empty()) return show_profile(o);
  if (o.quick && o.selftest) {
    std::fprintf(stderr, "chokepoint bench: --quick and --selftest exclude each other\n");
    return 2;
  }
  if (o.save && o.selftest) {
    std::fprintf(stderr, "chokepoint bench: --selftest measures nothing to --save\n");
    return 2;
  }
  auto module = bench::BenchModule::load_default();
  if (!module.ok()) {
    say("bench", module.status().message());
    return 1;
  }
  if (o.list) return print_testcases(*module.value());

  bench::BenchOptions bo;
  bo.mode = o.selftest ? "selftest" : o.quick ? "quick" : "full";
  bo.devices = o.devices;
  bo.only = o.only;
  ProgressPrinter progress;
  progress.enabled = !o.quiet;
  progress.tty = isatty(STDERR_FILENO) == 1;
  auto profile = bench::run_bench(
      *module.value(), bo, [&progress](int d, int t, const std::string& l) { progress(d, t, l); }, rules::bench_causes);
  progress.finish();
  if (!profile.ok()) {
    say("bench", profile.status().message());
    return 1;
  }
  const machine::Profile& p = profile.value();
  if (const int rc = emit(o, p); rc != 0) return rc;
  if (o.save) {
    if (const int rc = save_profiles(p, o.quiet); rc != 0) return rc;
  }
  if (o.selftest && bench::any_selftest_failed(p)) return 1;
  return 0;
}

}  // namespace

RunFn add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchCliOptions>();
  auto* cmd = app.add_subcommand(
      "bench",
      "Measure this machine's ceilings on each GPU (host<->device copies, memory and L2 bandwidth, "
      "launch latency, FP32 and tensor-core GEMM peaks) and set them beside the published figures, "
      "flagging anything below par with its likely cause. Takes under a minute (--quick: seconds).");
  cmd->add_flag("--quick", opts->quick, "Smaller sizes and fewer runs (under 10 s)");
  cmd->add_flag("--selftest", opts->selftest,
                "Check the method on the GPU instead of measuring: timing, copies, kernels and every GEMM "
                "precision against a CPU reference");
  add_format_option(cmd, &opts->format, report::kBenchFormats,
                    "Report format: " + report::format_names(report::kBenchFormats) +
                        " (json: the machine profile, schema chokepoint.profile/1)");
  cmd->add_flag("--json", opts->json, "The same as --format json");
  cmd->add_option("-o,--output", opts->output, "Write the report to FILE instead of stdout");
  cmd->add_flag("--save", opts->save,
                "Save the profile where analyze/run find it: ~/.config/chokepoint/profile-<gpu>.json "
                "(or $CHOKEPOINT_PROFILE)");
  cmd->add_option("--device", opts->devices, "GPU index to measure (repeatable; default all)")->delimiter(',');
  cmd->add_option("--only", opts->only, "Run only these testcases (comma-separated keys, see --list)")->delimiter(',');
  cmd->add_flag("--list", opts->list, "List the testcases and exit");
  cmd->add_option("--show", opts->show, "Render a saved profile (bench --json output) instead of measuring");
  cmd->add_flag("--notes", opts->notes, "Show how each figure was measured");
  cmd->add_option("--color", opts->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress or notes on stderr");
  cmd->footer(
      "Examples:\n  chokepoint bench --quick\n  chokepoint bench --save\n"
      "  chokepoint bench --json -o profile.json\n  chokepoint bench --only gemm_bf16,h2d_pinned\n"
      "The GPU code lives in libchokepoint_bench.so next to the executable (or $CHOKEPOINT_BENCH_MODULE).\n"
      "Exit status: 0 measured, 1 no usable GPU / module missing / a self-test failed, 2 usage error.");
  return [opts] { return run_bench(*opts); };
}

}  // namespace chokepoint::cli
