#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/tune_view.h"

namespace chokepoint::report {
namespace {

std::string figure(std::optional<double> v) {
  if (!v) return "-";
  return std::abs(*v) >= 1000 ? fmt::format("{:.0f}", *v) : fmt::format("{:.4g}", *v);
}

std::string memory(std::optional<double> bytes) {
  return bytes ? fmt::format("{:.2f} GiB", *bytes / (1024.0 * 1024 * 1024)) : "-";
}

std::string stop_text(const std::string& stopped) {
  if (stopped == "budget") return "stopped at the time budget (--budget)";
  if (stopped == "max_trials") return "stopped at --max-trials";
  if (stopped == "interrupted") return "interrupted: the trials done are kept; run the same command again to resume";
  if (stopped == "no_metric") {
    return "stopped: the command printed no throughput that --metric matches, and no steps were seen; check the "
           "regex against its output (trial-N/stdout.log) or let the program print one (e.g. 'samples/s: 1234')";
  }
  if (stopped == "failing") return "stopped: the first trials all failed (see their notes); the command itself fails";
  if (stopped == "all_oom") return "stopped: even the smallest batch ran out of GPU memory";
  return "";
}

std::string pct(double part, double whole) { return fmt::format("{:.0f}%", 100.0 * part / whole); }

const TuneTrialRow* best_trial(const TuneView& v) { return v.best ? &v.trials[*v.best] : nullptr; }

std::string trials_used(const TuneView& v) {
  const size_t total = v.trials.size();
  return fmt::format("{} trials ({} run now, {} resumed) of a grid of {} ({})", total, v.run, v.resumed, v.grid_size,
                     v.grid_size ? pct(static_cast<double>(total), static_cast<double>(v.grid_size)) : "-");
}

std::string lost(const TuneView& v, const TuneTrialRow& t) { return best_trial(v) == &t ? "best" : t.why_lost; }

std::string render_text(const TuneView& v, bool color) {
  const std::string bold = color ? "\033[1m" : "", plain = color ? "\033[0m" : "";
  std::string s = bold + "chokepoint tune" + plain + ": ";
  for (const std::string& w : v.command) s += w + " ";
  s += "\n  measured by " + v.measure + "; " + trials_used(v) + ", strategy " + v.strategy + "\n";
  if (const std::string stop = stop_text(v.stopped); !stop.empty()) s += "  " + stop + "\n";
  if (const TuneTrialRow* b = best_trial(v)) {
    s += fmt::format("\n{}Best: {}{}  {} {}, peak GPU memory {}", bold, b->config, plain, figure(b->throughput), v.unit,
                     memory(b->peak_memory_bytes));
    if (!b->verdict.empty()) s += ", verdict " + b->verdict + "-bound";
    s += "\n";
    if (!b->verdict_summary.empty()) s += "  " + b->verdict_summary + "\n";
  } else {
    s += "\nNo trial measured a throughput.\n";
  }
  if (!v.batch_param.empty() && !v.max_fit_batch.empty()) {
    s += fmt::format("Largest {} that fits: {}", v.batch_param, v.max_fit_batch);
    s += v.oom_batch.empty() ? " (the largest tried)\n" : " (" + v.oom_batch + " ran out of memory)\n";
  }
  if (!v.pareto.empty()) {
    s += "\nPareto set (throughput against peak GPU memory):\n";
    for (size_t i : v.pareto) {
      const TuneTrialRow& t = v.trials[i];
      s += fmt::format("  {:>10}  {:>10} {}  {}\n", memory(t.peak_memory_bytes), figure(t.throughput), v.unit,
                       t.config);
    }
  }
  s += fmt::format("\nTrials:\n  {:>3}  {:<36} {:>10} {:>10} {:>6}  {:<11} {}\n", "#", "configuration", v.unit,
                   "memory", "time", "outcome", "why it lost");
  for (const TuneTrialRow& t : v.trials) {
    s += fmt::format("  {:>3}  {:<36} {:>10} {:>10} {:>5.1f}s  {:<11} {}\n", t.id, t.config, figure(t.throughput),
                     memory(t.peak_memory_bytes), t.seconds, t.outcome + (t.resumed ? "*" : ""), lost(v, t));
  }
  if (v.resumed > 0) s += "  * read from " + v.trials_file + " (not run again)\n";
  s += "Trials file: " + v.trials_file + "\n";
  return s;
}

std::string render_json(const TuneView& v) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["schema"] = kTuneSchema;
  j["command"] = v.command;
  j["params"] = v.params;
  j["measure"] = v.measure;
  j["unit"] = v.unit;
  j["strategy"] = v.strategy;
  j["grid_size"] = v.grid_size;
  j["trials_used"] = v.trials.size();
  j["trials_run"] = v.run;
  j["trials_resumed"] = v.resumed;
  j["stopped"] = v.stopped.empty() ? Json(nullptr) : Json(v.stopped);
  j["stopped_reason"] = stop_text(v.stopped);
  j["batch_param"] = v.batch_param;
  j["max_fit_batch"] = v.max_fit_batch;
  j["oom_batch"] = v.oom_batch;
  j["best"] = v.best ? Json(v.trials[*v.best].id) : Json();
  Json front = Json::array();
  for (size_t i : v.pareto) front.push_back(v.trials[i].id);
  j["pareto"] = front;
  j["trials"] = Json::array();
  for (const TuneTrialRow& row : v.trials) {
    Json t = Json::parse(row.json_line, nullptr, false);
    if (t.is_discarded()) t = Json::object();
    t["resumed"] = row.resumed;
    t["why_lost"] = row.why_lost;
    j["trials"].push_back(t);
  }
  j["trials_file"] = v.trials_file;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_markdown(const TuneView& v) {
  auto cell = [](std::string text) {
    for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    return text;
  };
  std::string cmd;
  for (const std::string& w : v.command) cmd += (cmd.empty() ? "" : " ") + w;
  std::string s = "# chokepoint tune\n\n`" + cmd + "`\n\nMeasured by " + cell(v.measure) + "; " + trials_used(v) +
                  ", strategy " + v.strategy + ".\n";
  if (const std::string stop = stop_text(v.stopped); !stop.empty()) s += "\n**" + stop + "**\n";
  if (const TuneTrialRow* b = best_trial(v)) {
    s += fmt::format("\n**Best: `{}`**: {} {}, peak GPU memory {}{}.\n", b->config, figure(b->throughput), v.unit,
                     memory(b->peak_memory_bytes), b->verdict.empty() ? "" : ", verdict " + b->verdict + "-bound");
  }
  if (!v.batch_param.empty() && !v.max_fit_batch.empty()) {
    s += "\nLargest " + v.batch_param + " that fits: " + v.max_fit_batch +
         (v.oom_batch.empty() ? "" : " (" + v.oom_batch + " ran out of memory)") + ".\n";
  }
  if (!v.pareto.empty()) {
    s += "\n## Pareto set (throughput against peak GPU memory)\n\n| peak memory | " + v.unit +
         " | configuration |\n|---:|---:|---|\n";
    for (size_t i : v.pareto) {
      const TuneTrialRow& t = v.trials[i];
      s += "| " + memory(t.peak_memory_bytes) + " | " + figure(t.throughput) + " | `" + t.config + "` |\n";
    }
  }
  s += "\n## Trials\n\n| # | configuration | " + v.unit +
       " | peak memory | time | outcome | why it lost |\n|---:|---|---:|---:|---:|---|---|\n";
  for (const TuneTrialRow& t : v.trials) {
    s += fmt::format("| {} | `{}` | {} | {} | {:.1f} s | {}{} | {} |\n", t.id, t.config, figure(t.throughput),
                     memory(t.peak_memory_bytes), t.seconds, t.outcome, t.resumed ? " (resumed)" : "",
                     cell(lost(v, t)));
  }
  return s;
}

}  // namespace

std::string render_tune(const TuneView& v, Format format, bool color) {
  switch (format) {
    case Format::kJson: return render_json(v);
    case Format::kMarkdown: return render_markdown(v);
    default: return render_text(v, color);
  }
}

}  // namespace chokepoint::report
