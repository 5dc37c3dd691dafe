#include "tune/tune_report.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace chokepoint::tune {
namespace {

std::string config_text(const Trial& t) {
  std::string s;
  for (const auto& [k, v] : t.config) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

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

const Trial* best_trial(const TuneReport& r) { return r.result.best ? &r.result.trials[*r.result.best] : nullptr; }

std::string trials_used(const TuneReport& r) {
  const size_t total = r.result.trials.size();
  return fmt::format("{} trials ({} run now, {} resumed) of a grid of {} ({})", total, r.result.run, r.result.resumed,
                     r.grid_size,
                     r.grid_size ? pct(static_cast<double>(total), static_cast<double>(r.grid_size)) : "-");
}

}  // namespace

std::string why_lost(const TuneReport& r, size_t i) {
  const Trial& t = r.result.trials[i];
  const Trial* best = best_trial(r);
  if (best == &t) return "";
  std::string why;
  switch (t.outcome) {
    case Outcome::kOk:
    case Outcome::kEarlyStop:
      if (best && t.throughput && *best->throughput > 0) {
        why = fmt::format("{:.0f}% below the best", 100.0 * (1 - *t.throughput / *best->throughput));
        if (t.outcome == Outcome::kEarlyStop) why += " (stopped early)";
      } else {
        why = t.note;
      }
      break;
    default: why = t.note.empty() ? outcome_name(t.outcome) : t.note;
  }
  if (best && (t.outcome == Outcome::kOk || t.outcome == Outcome::kEarlyStop)) {
    std::string diff;
    for (size_t k = 0; k < t.config.size() && k < best->config.size(); ++k) {
      if (t.config[k].second != best->config[k].second) {
        diff += (diff.empty() ? "" : ", ") + t.config[k].first + "=" + t.config[k].second + " (best " +
                best->config[k].second + ")";
      }
    }
    if (!diff.empty()) why += "; " + diff;
  }
  if (!t.verdict.empty() && t.verdict != "unknown") why += "; verdict: " + t.verdict + "-bound";
  return why;
}

std::string render_tune_text(const TuneReport& r, bool color) {
  const std::string bold = color ? "\033[1m" : "", plain = color ? "\033[0m" : "";
  std::string s = bold + "chokepoint tune" + plain + ": ";
  for (const std::string& w : r.command) s += w + " ";
  s += "\n  measured by " + r.measure + "; " + trials_used(r) + ", strategy " + r.result.strategy + "\n";
  if (const std::string stop = stop_text(r.result.stopped); !stop.empty()) s += "  " + stop + "\n";
  if (const Trial* b = best_trial(r)) {
    s += fmt::format("\n{}Best: {}{}  {} {}, peak GPU memory {}", bold, config_text(*b), plain, figure(b->throughput),
                     r.unit, memory(b->peak_memory_bytes));
    if (!b->verdict.empty()) s += ", verdict " + b->verdict + "-bound";
    s += "\n";
    if (!b->verdict_summary.empty()) s += "  " + b->verdict_summary + "\n";
  } else {
    s += "\nNo trial measured a throughput.\n";
  }
  if (!r.batch_param.empty() && !r.result.max_fit_batch.empty()) {
    s += fmt::format("Largest {} that fits: {}", r.batch_param, r.result.max_fit_batch);
    s += r.result.oom_batch.empty() ? " (the largest tried)\n" : " (" + r.result.oom_batch + " ran out of memory)\n";
  }
  const std::vector<size_t> front = pareto_front(r.result.trials);
  if (!front.empty()) {
    s += "\nPareto set (throughput against peak GPU memory):\n";
    for (size_t i : front) {
      const Trial& t = r.result.trials[i];
      s += fmt::format("  {:>10}  {:>10} {}  {}\n", memory(t.peak_memory_bytes), figure(t.throughput), r.unit,
                       config_text(t));
    }
  }
  s += fmt::format("\nTrials:\n  {:>3}  {:<36} {:>10} {:>10} {:>6}  {:<11} {}\n", "#", "configuration", r.unit,
                   "memory", "time", "outcome", "why it lost");
  for (size_t i = 0; i < r.result.trials.size(); ++i) {
    const Trial& t = r.result.trials[i];
    s += fmt::format("  {:>3}  {:<36} {:>10} {:>10} {:>5.1f}s  {:<11} {}\n", t.id, config_text(t), figure(t.throughput),
                     memory(t.peak_memory_bytes), t.seconds,
                     std::string(outcome_name(t.outcome)) + (t.resumed ? "*" : ""),
                     best_trial(r) == &t ? "best" : why_lost(r, i));
  }
  if (r.result.resumed > 0) s += "  * read from " + r.trials_file + " (not run again)\n";
  s += "Trials file: " + r.trials_file + "\n";
  return s;
}

std::string render_tune_json(const TuneReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = "chokepoint.tune/1";
  j["command"] = r.command;
  j["params"] = r.params;
  j["measure"] = r.measure;
  j["unit"] = r.unit;
  j["strategy"] = r.result.strategy;
  j["grid_size"] = r.grid_size;
  j["trials_used"] = r.result.trials.size();
  j["trials_run"] = r.result.run;
  j["trials_resumed"] = r.result.resumed;
  j["stopped"] = r.result.stopped.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.result.stopped);
  j["stopped_reason"] = stop_text(r.result.stopped);
  j["batch_param"] = r.batch_param;
  j["max_fit_batch"] = r.result.max_fit_batch;
  j["oom_batch"] = r.result.oom_batch;
  j["best"] = r.result.best ? nlohmann::ordered_json(r.result.trials[*r.result.best].id) : nlohmann::ordered_json();
  nlohmann::ordered_json front = nlohmann::ordered_json::array();
  for (size_t i : pareto_front(r.result.trials)) front.push_back(r.result.trials[i].id);
  j["pareto"] = front;
  j["trials"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.result.trials.size(); ++i) {
    nlohmann::ordered_json t = nlohmann::ordered_json::parse(trial_to_json_line(r.result.trials[i]));
    t["resumed"] = r.result.trials[i].resumed;
    t["why_lost"] = why_lost(r, i);
    j["trials"].push_back(t);
  }
  j["trials_file"] = r.trials_file;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_tune_markdown(const TuneReport& r) {
  auto cell = [](std::string text) {
    for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    return text;
  };
  std::string cmd;
  for (const std::string& w : r.command) cmd += (cmd.empty() ? "" : " ") + w;
  std::string s = "# chokepoint tune\n\n`" + cmd + "`\n\nMeasured by " + cell(r.measure) + "; " + trials_used(r) +
                  ", strategy " + r.result.strategy + ".\n";
  if (const std::string stop = stop_text(r.result.stopped); !stop.empty()) s += "\n**" + stop + "**\n";
  if (const Trial* b = best_trial(r)) {
    s += fmt::format("\n**Best: `{}`**: {} {}, peak GPU memory {}{}.\n", config_text(*b), figure(b->throughput), r.unit,
                     memory(b->peak_memory_bytes), b->verdict.empty() ? "" : ", verdict " + b->verdict + "-bound");
  }
  if (!r.batch_param.empty() && !r.result.max_fit_batch.empty()) {
    s += "\nLargest " + r.batch_param + " that fits: " + r.result.max_fit_batch +
         (r.result.oom_batch.empty() ? "" : " (" + r.result.oom_batch + " ran out of memory)") + ".\n";
  }
  if (const std::vector<size_t> front = pareto_front(r.result.trials); !front.empty()) {
    s += "\n## Pareto set (throughput against peak GPU memory)\n\n| peak memory | " + r.unit +
         " | configuration |\n|---:|---:|---|\n";
    for (size_t i : front) {
      const Trial& t = r.result.trials[i];
      s += "| " + memory(t.peak_memory_bytes) + " | " + figure(t.throughput) + " | `" + config_text(t) + "` |\n";
    }
  }
  s += "\n## Trials\n\n| # | configuration | " + r.unit +
       " | peak memory | time | outcome | why it lost |\n|---:|---|---:|---:|---:|---|---|\n";
  for (size_t i = 0; i < r.result.trials.size(); ++i) {
    const Trial& t = r.result.trials[i];
    s += fmt::format("| {} | `{}` | {} | {} | {:.1f} s | {}{} | {} |\n", t.id, config_text(t), figure(t.throughput),
                     memory(t.peak_memory_bytes), t.seconds, outcome_name(t.outcome), t.resumed ? " (resumed)" : "",
                     cell(best_trial(r) == &t ? "best" : why_lost(r, i)));
  }
  return s;
}

}  // namespace chokepoint::tune
