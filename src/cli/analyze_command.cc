// chokepoint analyze TRACE|DIR ... [--format text|json|md] [-o FILE]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/output.h"
#include "pipeline/analyze_pipeline.h"
#include "report/reporter.h"

namespace chokepoint::cli {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string output;        // empty: stdout
  std::string color = "auto";
  bool quiet = false;
};

// Progress on stderr for long imports, only where a person watches.
struct Progress {
  bool enabled = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last{};
  bool printed = false;

  static void report(void* ctx, uint64_t done, uint64_t total) {
    auto* p = static_cast<Progress*>(ctx);
    const auto now = std::chrono::steady_clock::now();
    if (!p->enabled || now - p->start < std::chrono::milliseconds(500) ||
        now - p->last < std::chrono::milliseconds(200)) {
      return;
    }
    p->last = now;
    p->printed = true;
    const double secs = std::chrono::duration<double>(now - p->start).count();
    if (total > 0) {
      std::fprintf(stderr, "\rchokepoint: reading %.0f / %.0f MB (%.0f%%, %.0f MB/s)   ", done / 1e6,
                   total / 1e6, 100.0 * static_cast<double>(done) / static_cast<double>(total), done / 1e6 / secs);
    } else {
      std::fprintf(stderr, "\rchokepoint: reading %.0f MB (%.0f MB/s)   ", done / 1e6, done / 1e6 / secs);
    }
  }
  void finish() const {
    if (printed) std::fprintf(stderr, "\r\033[K");
  }
};

int run_analyze(const AnalyzeOptions& o) {
  auto reporter = report::make_reporter(o.format);
  if (!reporter) {
    std::fprintf(stderr, "chokepoint analyze: unknown format '%s' (use %s)\n", o.format.c_str(),
                 report::reporter_formats());
    return 2;
  }
  Progress progress;
  progress.enabled = !o.quiet && isatty(STDERR_FILENO) == 1;
  importers::ImportOptions io;
  io.progress = &Progress::report;
  io.progress_ctx = &progress;
  auto result = pipeline::analyze_paths(o.inputs, io);
  progress.finish();
  if (!result.ok()) {
    std::fprintf(stderr, "chokepoint analyze: %s\n", result.status().message().c_str());
    return 1;
  }
  report::RenderOptions ro;
  ro.color = want_color(o.color, !o.output.empty() && o.output != "-");
  ro.width = text_width(ro.width);
  std::ostringstream text;
  Status s = reporter->write(result.value(), text, ro);
  if (!s.ok()) {
    std::fprintf(stderr, "chokepoint analyze: %s\n", s.message().c_str());
    return 1;
  }
  return write_output("analyze", o.output, text.str(), o.quiet) ? 0 : 1;
}

}  // namespace

RunFn add_analyze_command(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze", "Diagnose a recorded trace: PyTorch profiler (Kineto) JSON, .json or .json.gz, or a "
                 "directory of them. Prints step time, where GPU time and idle time go, the verdict and "
                 "ranked findings with evidence, recommendation and estimated speedup.");
  cmd->add_option("inputs", opts->inputs, "Trace files or directories")->required();
  cmd->add_option("-f,--format", opts->format, "Report format: text, json, md")
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--color", opts->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress or notes on stderr");
  cmd->footer(
      "Examples:\n  chokepoint analyze run/trace.json.gz\n"
      "  chokepoint analyze run/ --format json -o report.json\n"
      "Exit status: 0 report written, 1 input could not be read, 2 usage error.");
  return [opts] { return run_analyze(*opts); };
}

}  // namespace chokepoint::cli
