// chokepoint diff BEFORE AFTER [--format text|md|json] [-o FILE] [--fail-if-slower PCT]
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "base/safe_write.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/output.h"
#include "pipeline/run_diff.h"
#include "report/diff_render.h"

namespace chokepoint::cli {
namespace {

struct DiffOptions {
  std::string before, after;
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

// The gate: 0 to pass, kExitGate when AFTER's median step is slower by more than `pct`,
// kExitFailed when either side has no step time to compare.
int gate(const report::RunDiff& d, double pct) {
  if (!d.step.change_pct) {
    say("diff", "--fail-if-slower: a side has no step time to compare");
    return kExitFailed;
  }
  if (*d.step.change_pct <= pct) return kExitOk;
  char msg[200];
  std::snprintf(msg, sizeof msg, "the median step is %.1f%% slower (more than %g%%, --fail-if-slower%s): exit status 3",
                *d.step.change_pct, pct, d.step.within_noise ? "; within noise" : "");
  say("diff", msg);
  return kExitGate;
}

int run_diff(const DiffOptions& o) {
  const auto gate_pct = o.fail_if_slower.empty() ? std::optional<double>() : parse_pct(o.fail_if_slower);
  if (!o.fail_if_slower.empty() && !gate_pct) {
    say("diff", "--fail-if-slower takes a percentage, such as 5% (got '" + o.fail_if_slower + "')");
    return kExitUsage;
  }
  const bool to_file = !o.output.empty() && o.output != "-";
  const std::vector<std::string> keep = to_file ? input_files({o.before, o.after}) : std::vector<std::string>{};
  if (Status s = check_not_same_file(o.output, keep); !s.ok()) {
    say("diff", s.message());
    return exit_status(s);
  }
  pipeline::AnalyzeOptions ao;
  ao.ceilings.file = o.ceilings;
  ao.ceilings.saved_profiles = !o.no_saved_profile;
  auto before = pipeline::load_diff_side(o.before, {}, ao);
  if (!before.ok()) {
    say("diff", "BEFORE: " + before.status().message());
    return exit_status(before.status());
  }
  auto after = pipeline::load_diff_side(o.after, {}, ao);
  if (!after.ok()) {
    say("diff", "AFTER: " + after.status().message());
    return exit_status(after.status());
  }
  const report::RunDiff d = pipeline::compare_reports(std::move(before).value(), std::move(after).value());
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
      "Compare two runs: BEFORE and AFTER are each a trace, a directory of traces, a recording of `chokepoint run`, "
      "or a JSON report of `analyze --format json`, in any mix. Prints the step-time change and whether it is "
      "within noise, where the step time moved (categories, kernel classes, idle causes), the findings resolved, "
      "new and still present, and the promise check: each remedy BEFORE's report estimated, against the measured "
      "gain when its findings are gone.");
  cmd->add_option("before", opts->before, "The run before the change")->required();
  cmd->add_option("after", opts->after, "The run after the change")->required();
  cmd->add_option("-f,--format", opts->format, "Format: " + report::diff_formats() + " (md: for a pull request)")
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "Write the diff to FILE instead of stdout");
  cmd->add_option("--color", opts->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", opts->quiet, "No notes on stderr");
  add_ceilings_options(cmd, &opts->ceilings, &opts->no_saved_profile);
  cmd->add_option("--fail-if-slower", opts->fail_if_slower,
                  "CI gate: exit 3 (after writing the diff) when AFTER's median step is slower than BEFORE's by "
                  "more than PCT, e.g. 5%");
  cmd->footer(
      "Examples:\n  chokepoint diff before/trace.json.gz after/trace.json.gz\n"
      "  chokepoint analyze run/ --format json -o before.json   # keep a baseline report\n"
      "  chokepoint diff before.json after/ --format md -o diff.md --fail-if-slower 5%\n"
      "Exit status: 0 diff written, 1 an input could not be read (or --fail-if-slower without step times),\n"
      "2 usage error, 3 diff written and AFTER's median step slower by more than --fail-if-slower.");
  return [opts] { return run_diff(*opts); };
}

}  // namespace chokepoint::cli
