// `chokepoint diff BEFORE AFTER`: each side is a trace, a directory of traces, a recording
// of `run`, or a JSON report of `analyze --format json`, in any mix; traces and recordings
// go through the analyze pipeline, reports are read back. The comparison itself
// (compare_reports) works on two Reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "importers/importer.h"
#include "pipeline/analyze_pipeline.h"
#include "report/diff.h"

namespace chokepoint::pipeline {

// Significance level of the runs' test: a change with p >= this is within noise.
inline constexpr double kNoiseAlpha = 0.05;

// The run-to-run spread a change must exceed when a side has one run and this machine has
// no A/A record (`diff --aa`): the largest A/A ratio of the validation reruns, each program
// profiled twice in separate processes of one session (lstm_lm 1.27x, small_batch 1.14x,
// bert_item 1.11x; docs/VALIDATION.md "diff: A/A").
inline constexpr double kDefaultRunFloor = 1.30;

// How far a step figure with the recorder's cost taken out may be from the untraced run,
// measured on the validation pairs (docs/VALIDATION.md "diff: the headline"): torch.profiler
// traces whose modelled cost is at most 20% of the step land within 4.4% of the untraced
// median (11 traces), above it within 26% (12 traces; within 29% on the H100, 14 of 36 runs
// of six programs); the chokepoint tracer within 1.3% up to 3% of the step, and 23-84% off
// above it (its whole-job cost on launch-bound loops is not modelled: docs/VALIDATION.md
// round D), so there the figure is not trusted. A run's few recorded steps add their own
// spread (run_diff.cc).
struct CorrectionBand {
  double max_share;    // up to this recorder share of the step ...
  double uncertainty;  // ... the corrected figure is good to +- this fraction
};
inline constexpr CorrectionBand kProfilerBands[] = {{0.20, 0.05}, {1.0, 0.30}};
inline constexpr CorrectionBand kTracerBands[] = {{0.03, 0.05}};

// The noise floor from outside the runs: this machine's A/A record.
struct NoiseFloor {
  double ratio = 0;    // >= 1; 0 none recorded
  std::string source;  // "A/A record of NVIDIA H200 (3 runs, 2026-12-07)"
};

// Reads and analyzes one side.
Result<report::DiffSide> load_diff_side(const std::string& path, const importers::ImportOptions& io = {},
                                        const AnalyzeOptions& ao = {});

// The runs of one side: each path is a run, except a directory that holds runs (recordings,
// JSON reports, or directories of traces, two or more), which gives each of them.
Result<std::vector<report::DiffSide>> load_diff_runs(const std::vector<std::string>& paths,
                                                     const importers::ImportOptions& io = {},
                                                     const AnalyzeOptions& ao = {});

// The best step figure of one run (RunStep).
report::RunStep run_step(const report::DiffSide& s);

report::RunDiff compare_runs(std::vector<report::DiffSide> before, std::vector<report::DiffSide> after,
                             const NoiseFloor& aa = {});
report::RunDiff compare_reports(report::DiffSide before, report::DiffSide after, const NoiseFloor& aa = {});

// `diff --aa RUN...`: runs of one unchanged program. The spread of their best step figures
// (largest over smallest) is this machine's run-to-run noise.
struct AaRecord {
  std::string device;
  std::vector<std::string> runs;
  std::vector<double> values_ms;
  double spread = 0;
  std::string date;  // YYYY-MM-DD
};
Result<AaRecord> aa_record(const std::vector<report::DiffSide>& runs);

// Where A/A records live: $XDG_CONFIG_HOME/chokepoint/aa-<gpu slug>.json (beside the saved
// machine profiles); nullopt without a config directory or with saved profiles off.
std::optional<std::string> aa_path(const std::string& device);
// Appends the record (the file keeps the last 20); the floor is the largest spread kept.
Status save_aa_record(const AaRecord& r, const std::string& path);
NoiseFloor load_noise_floor(const std::string& path);

}  // namespace chokepoint::pipeline
