// chokepoint diff BEFORE AFTER | BEFORE... -- AFTER... | --aa RUN... [--format text|md|json|html] [-o FILE]
//   [--fail-if-slower PCT]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "base/safe_write.h"
#include "base/terminal_text.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/output.h"
#include "pipeline/run_diff.h"
#include "report/diff_render.h"
#include "report/format_util.h"

namespace chokepoint::cli {
namespace {

struct DiffOptions {
  std::vector<std::string> runs;  // BEFORE AFTER, or BEFORE... kDiffSeparator AFTER...
  bool aa = false;
  std::string format = "text";
  std::string output;
  std::string color = "auto";
  bool quiet = false;
  std::string ceilings;
  bool no_saved_profile = false;
  std::string fail_if_slower;  // "5%" or "5": the gate; "" none
};

// "5%", "5", "0.5%": a percentage >= 0; nullopt otherwise.
std::optional<double> parse_pct(std::string text) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  if (text.empty()) return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !(v >= 0) || v > 1e6) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The gate: 0 to pass, kExitGate when AFTER's step (the headline figure) is slower by more than `pct`,
// kExitFailed when either side has no step time to compare.
int gate(const report::RunDiff& d, double pct) {
  if (!d.step.change_pct) {
    say("diff", "--fail-if-slower: a side has no step time to compare");
    return kExitFailed;
  }
  if (*d.step.change_pct <= pct) return kExitOk;
  char msg[200];
  std::snprintf(msg, sizeof msg, "the step is %.1f%% slower (more than %g%%, --fail-if-slower%s): exit status 3",
                *d.step.change_pct, pct, d.step.within_noise ? "; within noise" : "");
  say("diff", msg);
  return kExitGate;
}

// BEFORE and AFTER from the positionals: split at "--", else exactly two.
bool split_runs(const std::vector<std::string>& runs, std::vector<std::string>& before,
                std::vector<std::string>& after) {
  const auto sep = std::find(runs.begin(), runs.end(), std::string(kDiffSeparator));
  if (sep != runs.end()) {
    before.assign(runs.begin(), sep);
    after.assign(sep + 1, runs.end());
  } else if (runs.size() == 2) {
    before = {runs[0]};
    after = {runs[1]};
  } else {
    say("diff", runs.size() < 2
                    ? "give BEFORE and AFTER (or BEFORE... -- AFTER...)"
                    : "more than two runs: put -- between BEFORE's runs and AFTER's (BEFORE... -- AFTER...)");
    return false;
  }
  if (before.empty() || after.empty()) {
    say("diff", std::string(before.empty() ? "BEFORE" : "AFTER") + " has no runs (BEFORE... -- AFTER...)");
    return false;
  }
  return true;
}

// `diff --aa RUN...`: this machine's run-to-run spread, saved beside the machine profiles.
int record_aa(const DiffOptions& o, const pipeline::AnalyzeOptions& ao) {
  if (std::find(o.runs.begin(), o.runs.end(), std::string(kDiffSeparator)) != o.runs.end()) {
    say("diff", "--aa takes runs of one unchanged program, without --");
    return kExitUsage;
  }
  auto runs = pipeline::load_diff_runs(o.runs, {}, ao);
  if (!runs.ok()) {
    say("diff", runs.status().message());
    return exit_status(runs.status());
  }
  auto rec = pipeline::aa_record(runs.value());
  if (!rec.ok()) {
    say("diff", rec.status().message());
    return exit_status(rec.status());
  }
  const auto path = pipeline::aa_path(rec.value().device);
  if (!path) {
    say("diff",
        "--aa: nowhere to keep the record (set HOME or XDG_CONFIG_HOME; CHOKEPOINT_PROFILE=none turns "
        "saved records off)");
    return kExitFailed;
  }
  if (Status s = pipeline::save_aa_record(rec.value(), *path); !s.ok()) {
    say("diff", s.message());
    return exit_status(s);
  }
  const pipeline::NoiseFloor floor = pipeline::load_noise_floor(*path);
  std::string values;
  for (double v : rec.value().values_ms) values += (values.empty() ? "" : ", ") + report::format_ms(v);
  std::printf(
      "A/A: %zu runs of one program on %s: %s; spread %s. Saved to %s; diff now calls a change of one run "
      "a side significant beyond %s.\n",
      rec.value().runs.size(), rec.value().device.empty() ? "an unknown GPU" : rec.value().device.c_str(),
      escape_controls(values).c_str(), report::format_ratio(rec.value().spread).c_str(), escape_controls(*path).c_str(),
      report::format_ratio(floor.ratio).c_str());
  return kExitOk;
}

int run_diff(const DiffOptions& o) {
  const auto gate_pct = o.fail_if_slower.empty() ? std::optional<double>() : parse_pct(o.fail_if_slower);
  if (!o.fail_if_slower.empty() && !gate_pct) {
    say("diff", "--fail-if-slower takes a percentage, such as 5% (got '" + o.fail_if_slower + "')");
    return kExitUsage;
  }
  pipeline::AnalyzeOptions ao;
  ao.ceilings.file = o.ceilings;
  ao.ceilings.saved_profiles = !o.no_saved_profile;
  if (o.aa) return record_aa(o, ao);
  std::vector<std::string> before_paths, after_paths;
  if (!split_runs(o.runs, before_paths, after_paths)) return kExitUsage;
  const bool to_file = !o.output.empty() && o.output != "-";
  std::vector<std::string> all = before_paths;
  all.insert(all.end(), after_paths.begin(), after_paths.end());
  const std::vector<std::string> keep = to_file ? input_files(all) : std::vector<std::string>{};
  if (Status s = check_not_same_file(o.output, keep); !s.ok()) {
    say("diff", s.message());
    return exit_status(s);
  }
  auto before = pipeline::load_diff_runs(before_paths, {}, ao);
  if (!before.ok()) {
    say("diff", "BEFORE: " + before.status().message());
    return exit_status(before.status());
  }
  auto after = pipeline::load_diff_runs(after_paths, {}, ao);
  if (!after.ok()) {
    say("diff", "AFTER: " + after.status().message());
    return exit_status(after.status());
  }
  pipeline::NoiseFloor floor;
  if (!o.no_saved_profile) {
    const auto& devices = before.value().front().report.devices;
    if (auto path = pipeline::aa_path(devices.empty() ? "" : devices.front().name)) {
      floor = pipeline::load_noise_floor(*path);
    }
  }
  const report::RunDiff d = pipeline::compare_runs(std::move(before).value(), std::move(after).value(), floor);
  report::RenderOptions ro;
  ro.color = want_color(o.color, to_file);
  ro.width = text_width(ro.width);
  std::ostringstream text;
  if (Status s = report::write_diff(d, o.format, text, ro); !s.ok()) {
    say("diff", s.message());
    return exit_status(s);
  }
  if (!write_output("diff", o.output, text.str(), o.quiet, keep)) return kExitFailed;
  return gate_pct ? gate(d, *gate_pct) : kExitOk;  // the diff is written first, as analyze --fail-on
}

}  // namespace

RunFn add_diff_command(CLI::App& app) {
  auto opts = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare runs before and after a change: each run is a trace, a directory of traces, a recording of "
      "`chokepoint run`, or a JSON report of `analyze --format json`, in any mix; a directory of runs "
      "(recordings, reports or directories of traces) gives each of them. Prints the step-time change as the best "
      "figure the evidence supports (untraced step times, else the recorders' own cost taken out, with the range "
      "that leaves) and whether it stands out of the run-to-run noise (several runs a side: Welch's t-test on the "
      "runs; one run a side: this machine's A/A spread, see --aa), where the step time moved, the findings "
      "resolved, new and still present, and the promise check: each remedy BEFORE's report estimated, against the "
      "measured gain when its findings are gone. Sides that look like different programs (other scripts, kernels "
      "and shapes that barely overlap) are marked and no promise is judged between them.");
  cmd->add_option("runs", opts->runs, "BEFORE AFTER, or BEFORE... -- AFTER... (several runs a side)")
      ->required()
      ->expected(1, -1);
  cmd->add_flag("--aa", opts->aa,
                "Record this machine's run-to-run spread from RUN... (two or more runs of one unchanged program) "
                "beside the saved machine profiles; later diffs with one run a side use it as their noise floor");
  add_format_option(cmd, &opts->format, report::kDiffFormats,
                    "Format: " + report::format_names(report::kDiffFormats) + " (md: for a pull request)");
  cmd->add_option("-o,--output", opts->output, "Write the diff to FILE instead of stdout");
  cmd->add_option("--color", opts->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", opts->quiet, "No notes on stderr");
  add_ceilings_options(cmd, &opts->ceilings, &opts->no_saved_profile);
  cmd->add_option("--fail-if-slower", opts->fail_if_slower,
                  "CI gate: exit 3 (after writing the diff) when AFTER's step (the headline figure) is slower than "
                  "BEFORE's by more than PCT, e.g. 5%");
  cmd->footer(
      "Examples:\n  chokepoint diff before/trace.json.gz after/trace.json.gz\n"
      "  chokepoint diff b1.rec b2.rec b3.rec -- a1.rec a2.rec a3.rec   # runs, not steps, are the unit\n"
      "  chokepoint diff --aa r1.rec r2.rec r3.rec   # record this machine's A/A spread\n"
      "  chokepoint analyze run/ --format json -o before.json   # keep a baseline report\n"
      "  chokepoint diff before.json after/ --format md -o diff.md --fail-if-slower 5%\n"
      "Exit status: 0 diff written (or A/A recorded), 1 an input could not be read (or --fail-if-slower without step "
      "times),\n"
      "2 usage error, 3 diff written and AFTER's step slower by more than --fail-if-slower.\n"
      "A/A records live beside the saved machine profiles ($XDG_CONFIG_HOME/chokepoint/aa-<gpu>.json);\n"
      "--no-saved-profile (or CHOKEPOINT_PROFILE=none) leaves them unread.");
  return [opts] { return run_diff(*opts); };
}

}  // namespace chokepoint::cli
