#include "tune/tune_report.h"

#include <fmt/format.h>

namespace chokepoint::tune {
namespace {

std::string config_text(const Trial& t) {
  std::string s;
  for (const auto& [k, v] : t.config) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

const Trial* best_trial(const TuneReport& r) { return r.result.best ? &r.result.trials[*r.result.best] : nullptr; }

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

report::TuneView tune_view(const TuneReport& r) {
  report::TuneView v;
  v.command = r.command;
  v.params = r.params;
  v.measure = r.measure;
  v.unit = r.unit;
  v.strategy = r.result.strategy;
  v.grid_size = r.grid_size;
  v.run = r.result.run;
  v.resumed = r.result.resumed;
  v.stopped = r.result.stopped;
  v.batch_param = r.batch_param;
  v.max_fit_batch = r.result.max_fit_batch;
  v.oom_batch = r.result.oom_batch;
  v.trials_file = r.trials_file;
  v.best = r.result.best;
  v.pareto = pareto_front(r.result.trials);
  for (size_t i = 0; i < r.result.trials.size(); ++i) {
    const Trial& t = r.result.trials[i];
    v.trials.push_back({.id = t.id,
                        .config = config_text(t),
                        .outcome = outcome_name(t.outcome),
                        .throughput = t.throughput,
                        .peak_memory_bytes = t.peak_memory_bytes,
                        .seconds = t.seconds,
                        .resumed = t.resumed,
                        .verdict = t.verdict,
                        .verdict_summary = t.verdict_summary,
                        .why_lost = why_lost(r, i),
                        .json_line = trial_to_json_line(t)});
  }
  return v;
}

}  // namespace chokepoint::tune
