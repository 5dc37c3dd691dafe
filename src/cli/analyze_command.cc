// chokepoint analyze TRACE|DIR ... [--format text|json|md|chrome] [-o FILE]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "base/safe_write.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/output.h"
#include "exporters/trace_formats.h"
#include "pipeline/analyze_pipeline.h"
#include "pipeline/chrome_export.h"
#include "report/reporter.h"
#include "report/stat_listing.h"

namespace chokepoint::cli {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string output;  // empty: stdout
  std::string color = "auto";
  bool quiet = false;
  std::string ceilings;  // --ceilings FILE
  bool no_saved_profile = false;
  std::string fail_on;   // --fail-on critical|warning: "" never fails on findings
  bool timings = false;  // --timings: the report also says how long the analysis took
};

// The findings at or above --fail-on's severity (CI gate, issue 15); 0 without the option.
size_t findings_at_or_above(const report::Report& r, const std::string& fail_on) {
  if (fail_on.empty()) return 0;
  const Severity bar = fail_on == "critical" ? Severity::kCritical : Severity::kWarning;
  return static_cast<size_t>(
      std::count_if(r.findings.begin(), r.findings.end(), [&](const rules::Finding& f) { return f.severity >= bar; }));
}

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
      std::fprintf(stderr, "\rchokepoint: reading %.0f / %.0f MB (%.0f%%, %.0f MB/s)   ", done / 1e6, total / 1e6,
                   100.0 * static_cast<double>(done) / static_cast<double>(total), done / 1e6 / secs);
    } else {
      std::fprintf(stderr, "\rchokepoint: reading %.0f MB (%.0f MB/s)   ", done / 1e6, done / 1e6 / secs);
    }
  }
  void finish() const {
    if (printed) std::fprintf(stderr, "\r\033[K");
  }
};

// `--format chrome`: the inputs as a trace-event file, streamed to its destination (it
// can be gigabytes; no copy of it is held in memory).
int export_trace(const AnalyzeOptions& o, const importers::ImportOptions& io, Progress& progress,
                 const std::vector<std::string>& keep) {
  auto in = pipeline::load_inputs(o.inputs, io);
  progress.finish();
  if (!in.ok()) {
    say("analyze", in.status().message());
    return exit_status(in.status());
  }
  exporters::ChromeTraceStats st;
  const bool ok = write_output_stream(
      "analyze", o.output, [&](std::ostream& out) { return pipeline::export_chrome_trace(in.value(), out, &st); },
      o.quiet, keep);
  if (!ok) return 1;
  if (!o.quiet && !o.output.empty() && o.output != "-") {
    std::fprintf(stderr,
                 "chokepoint analyze: %lld slices, %lld launch arrows, %lld counter values; open it in "
                 "https://ui.perfetto.dev or chrome://tracing\n",
                 static_cast<long long>(st.slices), static_cast<long long>(st.flows),
                 static_cast<long long>(st.counters));
  }
  return 0;
}

int run_analyze(const AnalyzeOptions& o) {
  // The trace export is not a reporter: it writes the timeline itself, not the Report.
  const bool trace = exporters::is_trace_format(o.format);
  auto reporter = trace ? nullptr : report::make_reporter(o.format);
  if (!trace && !reporter) {  // add_format_option checked it: only a caller that skips the parser gets here
    say("analyze", "unknown format '" + o.format + "' (use " + report::format_names(report::kAnalyzeFormats) + ", " +
                       exporters::trace_format_list() + ")");
    return kExitUsage;
  }
  // --fail-on judges findings, and the trace export makes none: a CI gate that silently
  // passes would be worse than the refusal (issue 47).
  if (trace && !o.fail_on.empty()) {
    say("analyze", "--fail-on judges the report's findings, and --format " + o.format +
                       " writes the trace without a diagnosis; run the two separately");
    return kExitUsage;
  }
  // The report must not replace what it reports on: said now, before a long import.
  const bool to_file = !o.output.empty() && o.output != "-";
  const std::vector<std::string> keep = to_file ? input_files(o.inputs) : std::vector<std::string>{};
  if (Status s = check_not_same_file(o.output, keep); !s.ok()) {
    say("analyze", s.message());
    return exit_status(s);  // a usage error: 2
  }
  Progress progress;
  progress.enabled = !o.quiet && isatty(STDERR_FILENO) == 1;
  importers::ImportOptions io;
  io.progress = &Progress::report;
  io.progress_ctx = &progress;
  if (trace) return export_trace(o, io, progress, keep);
  pipeline::AnalyzeOptions ao;
  ao.ceilings.file = o.ceilings;
  ao.ceilings.saved_profiles = !o.no_saved_profile;
  auto result = pipeline::analyze_paths(o.inputs, io, ao);
  progress.finish();
  if (!result.ok()) {
    say("analyze", result.status().message());
    return exit_status(result.status());
  }
  report::RenderOptions ro;
  ro.color = want_color(o.color, !o.output.empty() && o.output != "-");
  ro.width = text_width(ro.width);
  ro.timings = o.timings;
  std::ostringstream text;
  Status s = reporter->write(result.value(), text, ro);
  if (!s.ok()) {
    say("analyze", s.message());
    return 1;
  }
  if (!write_output("analyze", o.output, text.str(), o.quiet, keep)) return 1;
  // The report is written first: a CI job that fails on it still keeps it.
  if (const size_t n = findings_at_or_above(result.value(), o.fail_on); n > 0) {
    say("analyze", std::to_string(n) + (n == 1 ? " finding" : " findings") + " at or above " + o.fail_on +
                       " (--fail-on): exit status 3");
    return kExitGate;
  }
  return 0;
}

}  // namespace

void add_ceilings_options(CLI::App* cmd, std::string* file, bool* no_saved_profile) {
  cmd->add_option("--ceilings", *file,
                  "Judge against the ceilings in FILE (a profile written by `chokepoint bench --json` or "
                  "`bench --save`) instead of the saved profile or published figures")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--no-saved-profile", *no_saved_profile,
                "Ignore profiles saved by `bench --save` (and $CHOKEPOINT_PROFILE): published ceilings only");
}

RunFn add_analyze_command(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "Diagnose a recorded trace: PyTorch profiler (Kineto) JSON, .json or .json.gz, a CUPTI "
      "trace (.cptrace), a directory of them, or a recording of `chokepoint run`. Prints step "
      "time, where GPU time and idle time go, the verdict and ranked findings with evidence, "
      "recommendation and estimated speedup; or, with --format chrome, writes the timeline, step "
      "windows and sampled metrics as a trace for ui.perfetto.dev and chrome://tracing.");
  cmd->add_option("inputs", opts->inputs, "Trace files or directories")->required();
  add_format_option(
      cmd, &opts->format, report::kAnalyzeFormats,
      "Report format: " + report::format_names(report::kAnalyzeFormats) + "; or " +
          exporters::trace_format_list("alias") + ": a trace-event JSON file of the timeline instead of a report",
      {[](const std::string& f) { return exporters::is_trace_format(f); }, exporters::trace_format_list()});
  cmd->add_option("-o,--output", opts->output,
                  "Write the report (or the trace) to FILE instead of stdout: a new file renamed over FILE once "
                  "complete; refused when FILE is a symbolic link or one of the inputs");
  cmd->add_option("--color", opts->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress or notes on stderr");
  add_ceilings_options(cmd, &opts->ceilings, &opts->no_saved_profile);
  cmd->add_flag("--timings", opts->timings,
                "Also report how long the analysis took (off: the same input gives the same report, byte for byte)");
  cmd->add_option("--fail-on", opts->fail_on,
                  "CI gate: exit 3 (after writing the report) when a finding is at least this severe: critical, or "
                  "warning (warnings and criticals)")
      ->check(CLI::IsMember({"critical", "warning"}));
  // Like --help: answered while parsing (no inputs needed), then chokepoint exits 0.
  cmd->add_flag_callback(
      "--list-stats",
      [] {
        std::cout << report::format_stat_catalogue() << std::flush;
        throw CLI::Success();
      },
      "List the import and analysis stats a report may show (name, severity, reader, description) and exit");
  cmd->footer(
      "Examples:\n  chokepoint analyze run/trace.json.gz\n"
      "  chokepoint analyze run/ --format json -o report.json\n"
      "  chokepoint analyze run/ --format chrome -o trace.json   # open in ui.perfetto.dev\n"
      "  chokepoint analyze --list-stats                         # what an import stat means\n"
      "  chokepoint analyze run/ --fail-on critical               # in CI: exit 3 on a critical finding\n"
      "Exit status: 0 report written, 1 input could not be read, 2 usage error, 3 report written and\n"
      "a finding at or above --fail-on.");
  return [opts] { return run_analyze(*opts); };
}

}  // namespace chokepoint::cli
