// What `chokepoint tune` reports, as the tune layer found it (tune/tune_report.h builds
// this view from its search): the best configuration and its throughput, the Pareto set
// of throughput against peak GPU memory, the largest batch that fits, every trial with
// why it lost, and how many trials the search used. Rendered here like every report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/formats.h"

namespace chokepoint::report {

inline constexpr const char* kTuneSchema = "chokepoint.tune/1";

struct TuneTrialRow {
  int id = 0;
  std::string config;   // "batch=64 workers=8"
  std::string outcome;  // "ok", "oom", ...
  std::optional<double> throughput;
  std::optional<double> peak_memory_bytes;
  double seconds = 0;
  bool resumed = false;
  std::string verdict, verdict_summary;  // its recording's diagnosis
  std::string why_lost;                  // "" for the best
  std::string json_line;                 // the trial as the trials file keeps it (one JSON object)
};

struct TuneView {
  std::vector<std::string> command;  // with the {NAME} placeholders
  std::vector<std::string> params;   // the --param texts, as given
  std::string measure, unit, strategy;
  size_t grid_size = 0;
  int run = 0, resumed = 0;  // trials run now, read back from the trials file
  std::string stopped;       // "" the search ended; "budget", "max_trials", "interrupted", ...
  std::string batch_param, max_fit_batch, oom_batch;
  std::string trials_file;
  std::vector<TuneTrialRow> trials;
  std::optional<size_t> best;  // index into trials
  std::vector<size_t> pareto;  // indices into trials, by memory
};

// One of kTuneFormats; colour only for text.
std::string render_tune(const TuneView& v, Format format, bool color = false);

}  // namespace chokepoint::report
