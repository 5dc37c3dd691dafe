// chokepoint tune --param NAME=VALUES ... [options] -- COMMAND with {NAME} placeholders:
// short trials of the command over the parameters' values (tune/search.h), each run and
// measured like `run` (tune/runner.h), and the report of the best, the Pareto set and
// why each other trial lost (tune/tune_report.h).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/terminal_text.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "tracer/setup.h"
#include "tune/runner.h"
#include "tune/search.h"
#include "tune/tune_report.h"

namespace chokepoint::cli {
namespace {

struct TuneOptions {
  std::vector<std::string> params, command;
  int steps = 20, warmup = 2, max_trials = 0;
  std::string metric, memory_metric, unit, budget, timeout = "5m", trials, dir = "chokepoint-tune";
  std::string search = "coordinate", batch_param, format = "text", report_file, color = "auto";
  double early_stop = 0.5;
  bool no_gpu = false, quiet = false;
};

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

std::optional<tune::Pattern> compile(const char* flag, const std::string& text, bool* ok) {
  if (text.empty()) return std::nullopt;
  Result<tune::Pattern> p = tune::Pattern::compile(text);
  if (!p.ok()) {
    say("tune", std::string(flag) + " " + p.status().message());
    *ok = false;
    return std::nullopt;
  }
  return std::move(p).value();
}

std::string default_unit(const TuneOptions& o, bool has_batch) {
  if (!o.unit.empty()) return o.unit;
  if (o.metric.empty()) return has_batch ? "samples/s" : "steps/s";
  if (o.metric.find("tok") != std::string::npos) return "tokens/s";
  if (o.metric.find("sample") != std::string::npos) return "samples/s";
  return "per s";
}

// The runner's options from the command line; false (said) on a usage error.
bool runner_options(const TuneOptions& o, tune::RunnerOptions& ro) {
  bool ok = true;
  ro.metric = compile("--metric", o.metric, &ok);
  ro.memory = compile("--memory-metric", o.memory_metric, &ok);
  if (!ok) return false;
  const auto timeout = parse_duration_ns(o.timeout);
  if (!timeout) {
    say("tune", "--timeout '" + o.timeout + "' is not a duration (e.g. 90s, 5m)");
    return false;
  }
  ro.timeout_s = static_cast<double>(*timeout) / 1e9;
  ro.dir = o.dir;
  ro.steps = o.steps;
  ro.warmup = o.warmup;
  ro.early_stop = o.early_stop;
  ro.gpu = !o.no_gpu;
  if (!ro.metric) {
    const std::string lib = tracer::find_tracer_library();
    if (lib.empty()) {
      say("tune",
          "without --metric, tune measures the steps of a CUPTI trace, which needs libchokepoint_tracer.so next to "
          "chokepoint (or at $CHOKEPOINT_TRACER_LIB), and there is none; give --metric 'REGEX' matching the "
          "throughput the program prints (e.g. --metric 'samples/s: ([0-9.]+)')");
      return false;
    }
    ro.tracer_library = lib;
  }
  return true;
}

void progress(const tune::Trial& t, const std::string& unit) {
  std::string config;
  for (const auto& [k, v] : t.config) config += (config.empty() ? "" : " ") + k + "=" + v;
  std::fprintf(stderr, "chokepoint tune: trial %d  %s  %s%s%s (%.1f s)%s%s\n", t.id, escape_controls(config).c_str(),
               tune::outcome_name(t.outcome), t.throughput ? ", " : "",
               t.throughput ? (std::to_string(static_cast<long long>(*t.throughput)) + " " + unit).c_str() : "",
               t.seconds, t.note.empty() ? "" : ": ", escape_controls(t.note).c_str());
}

// The space of the --param options, checked against the command; nullopt (said) when wrong.
std::optional<tune::Space> parse_space(const TuneOptions& o) {
  std::vector<tune::Param> params;
  for (const std::string& text : o.params) {
    auto p = tune::parse_param(text);
    if (!p.ok()) return say("tune", p.status().message()), std::nullopt;
    params.push_back(std::move(p.value()));
  }
  auto space = tune::make_space(std::move(params), o.batch_param);
  if (!space.ok()) return say("tune", space.status().message()), std::nullopt;
  if (Status s = tune::check_command(o.command, space.value()); !s.ok()) return say("tune", s.message()), std::nullopt;
  return std::move(space.value());
}

// The search's options; false (said) on a usage error.
bool search_options(const TuneOptions& o, tune::SearchOptions& so) {
  if (auto f = report::parse_format(o.format, report::kTuneFormats); !f.ok()) {
    return say("tune", f.status().message()), false;
  }
  so.grid = o.search == "grid";
  so.max_trials = o.max_trials;
  if (!o.budget.empty()) {
    const auto b = parse_duration_ns(o.budget);
    if (!b) return say("tune", "--budget '" + o.budget + "' is not a duration (e.g. 10m)"), false;
    so.budget_s = static_cast<double>(*b) / 1e9;
  }
  return true;
}

// Runs one trial for the search: appends it to the trials file and says it on stderr.
// After an interrupt none starts.
struct TrialRunner {
  const TuneOptions& o;
  const tune::Space& s;
  const tune::RunnerOptions& ro;
  std::string trials_file, unit;

  tune::Trial operator()(const tune::Config& c, int id, std::optional<double> best) const {
    tune::Trial t;
    if (g_interrupted) {
      t.id = id;
      t.outcome = tune::Outcome::kInterrupted;
      t.note = "not started: interrupted";
      return t;
    }
    std::optional<double> batch;
    if (s.batch < s.params.size()) batch = std::stod(s.params[s.batch].values[c[s.batch]]);
    t = tune::run_trial(ro, tune::substitute(o.command, s, c), id, best, batch);
    t.config = s.assignment(c);
    if (t.outcome == tune::Outcome::kInterrupted) g_interrupted = 1;
    if (t.finished()) {
      if (Status st = tune::append_trial(trials_file, t); !st.ok()) say("tune", st.message());
    }
    if (!o.quiet) progress(t, unit);
    return t;
  }
};

// Ctrl-C at the terminal reaches the trial's process group (it holds the terminal): the
// trial ends interrupted. Between trials it reaches us: the next trial does not start.
struct InterruptScope {
  struct sigaction old_int {
  }, old_term{};
  InterruptScope() {
    g_interrupted = 0;
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~InterruptScope() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

std::string render(const TuneOptions& o, const tune::TuneReport& rep) {
  const report::Format f = report::parse_format(o.format, report::kTuneFormats).value();  // search_options checked it
  return report::render_tune(tune::tune_view(rep), f, o.report_file.empty() && want_color(o.color, false));
}

int run_tune(const TuneOptions& o) {
  const std::optional<tune::Space> space = parse_space(o);
  tune::SearchOptions so;
  tune::RunnerOptions ro;
  if (!space || !search_options(o, so) || !runner_options(o, ro)) return 2;
  const tune::Space& s = *space;
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) return say("tune", "cannot create " + o.dir + ": " + ec.message()), 1;
  const std::string trials_file = o.trials.empty() ? o.dir + "/trials.jsonl" : o.trials;
  int bad = 0;
  auto resumed = tune::read_trials(trials_file, &bad);
  if (!resumed.ok()) return say("tune", resumed.status().message()), 1;
  if (!o.quiet && !resumed->empty()) {
    say("tune", "resuming from " + trials_file + ": " + std::to_string(resumed->size()) + " trials there" +
                    (bad > 0 ? " (" + std::to_string(bad) + " unreadable lines skipped)" : "") +
                    "; finished ones are not run again");
  }
  tune::TuneReport rep;
  rep.unit = default_unit(o, s.batch < s.params.size());
  const TrialRunner runner{o, s, ro, trials_file, rep.unit};
  const auto t0 = std::chrono::steady_clock::now();
  auto clock = [t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  {
    InterruptScope interrupts;
    rep.result = tune::search(s, so, runner, std::move(resumed.value()), clock);
  }
  rep.command = o.command;
  rep.params = o.params;
  rep.grid_size = s.grid_size();
  rep.batch_param = s.batch < s.params.size() ? s.params[s.batch].name : "";
  rep.measure = o.metric.empty() ? "the steps of a CUPTI trace (" + std::to_string(o.steps) + " after " +
                                       std::to_string(o.warmup) + ")"
                                 : "--metric '" + o.metric + "' (median of " + std::to_string(o.steps) +
                                       " values after " + std::to_string(o.warmup) + ")";
  rep.trials_file = trials_file;
  if (!write_output("tune", o.report_file, render(o, rep), o.quiet)) return 1;
  if (rep.result.stopped == "interrupted") return 130;
  return rep.result.best ? 0 : 1;
}

}  // namespace

RunFn add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  auto* c = app.add_subcommand("tune",
                               "Search a command's parameters (batch size, workers, precision, ...) for throughput: "
                               "short trials, each run and diagnosed like `run`, the largest batch that fits, the "
                               "best configuration, the Pareto set against GPU memory, and why each other lost.");
  c->add_option("--param", o->params,
                "NAME=VALUES, repeated: LO..HI (integers; powers of two from LO when HI/LO >= 8), LO..HI:STEP, "
                "or a,b,c. {NAME} in the command is replaced by the value")
      ->required();
  c->add_option("--metric", o->metric,
                "Regex of the throughput the program prints (group 1 the number, e.g. 'samples/s: ([0-9.]+)'); "
                "without it, the steps of a CUPTI trace (samples/s with a batch parameter)");
  c->add_option("--memory-metric", o->memory_metric,
                "Regex of the program's peak GPU memory in MiB (group 1); else the GPUs' memory used, from NVML");
  c->add_option("--steps", o->steps, "Values (or steps) measured per trial, after the warm-up ones")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  c->add_option("--warmup", o->warmup, "First values (or steps) of each trial left out")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  c->add_option("--budget", o->budget, "No trial starts after this long (e.g. 10m)");
  c->add_option("--timeout", o->timeout, "A trial still running after this long is killed (its process group)")
      ->capture_default_str();
  c->add_option("--early-stop", o->early_stop,
                "Stop a trial whose throughput is below this share of the best so far (0: never)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  c->add_option("--max-trials", o->max_trials,
                "Use at most this many trials, those resumed from the trials file included (0: no cap)")
      ->check(CLI::Range(0, 1000000));
  c->add_option("--search", o->search, "coordinate (the batch limit, then line searches) or grid (every configuration)")
      ->check(CLI::IsMember({"coordinate", "grid"}))
      ->capture_default_str();
  c->add_option("--batch-param", o->batch_param,
                "The parameter that is the batch size (default: the one named *batch*; '-' none)");
  c->add_option("-o,--dir", o->dir, "Folder of the trials (trial-N/: recording, stdout.log, stderr.log)")
      ->capture_default_str();
  c->add_option(
      "--trials", o->trials,
      "Trials file (JSON lines, appended; a rerun skips the finished trials in it). Default DIR/trials.jsonl");
  c->add_option("--unit", o->unit, "Unit of the throughput in the report (default from --metric)");
  add_format_option(c, &o->format, report::kTuneFormats,
                    "Report format: " + report::format_names(report::kTuneFormats));
  c->add_option("--report", o->report_file, "Write the report to FILE instead of stdout");
  c->add_option("--color", o->color, "auto, always, never")->check(CLI::IsMember({"auto", "always", "never"}));
  c->add_flag("--no-gpu", o->no_gpu, "Do not load NVML");
  c->add_flag("-q,--quiet", o->quiet, "No line per trial on stderr");
  c->add_option("command", o->command, "The command, after --, with {NAME} placeholders")->required();
  c->footer(
      "Example:\n  chokepoint tune --param batch=8..1024 --param workers=0..16 --param amp=off,bf16 "
      "--metric 'samples/s: ([0-9.]+)' --budget 10m -- python train.py --batch-size {batch} --workers {workers} "
      "--amp {amp}\n"
      "Out of memory is read from the exit status and 'CUDA out of memory' / 'OutOfMemoryError' on the output. "
      "Ctrl-C ends the running trial; the trials done are kept and reported, and a rerun resumes.\n"
      "Exit status: 0 with a best configuration, 1 without, 130 when interrupted, 2 on a usage error.");
  return [o] { return run_tune(*o); };
}

}  // namespace chokepoint::cli
