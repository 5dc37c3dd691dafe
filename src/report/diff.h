// The comparison of two runs (`chokepoint diff BEFORE AFTER`): built by pipeline/run_diff
// from two Reports, rendered by report/diff_render (text, Markdown, JSON, HTML).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace chokepoint::report {

inline constexpr const char* kDiffSchema = "chokepoint.diff/1";

// One side of the comparison: what it was read from and its report.
struct DiffSide {
  std::string path;
  std::string kind;  // "trace", "recording", "report" (a JSON report read back)
  Report report;
};

// One run of a side and the best figure of its step that its evidence supports.
struct RunStep {
  std::string path;
  double profiled_ms = 0;  // the step's p50 as recorded (the recorders' cost included); 0 no steps
  double ms = 0;           // the best figure: untraced, or with the recorders' cost taken out; 0 none
  // "untraced" (live samples: nothing recorded the job's calls), "corrected" (a trace's
  // steps replayed without the recorder's cost, Report::replay), "profiled" (as recorded:
  // the recorder's cost unknown), "" no steps.
  std::string source;
  double recorder_share = 0;          // of the recorded step that was the recorder's own cost
  std::optional<double> uncertainty;  // +- fraction of `ms` the correction leaves (0 untraced); unknown: nullopt
};

// The step-time change: the headline is the best figure the evidence supports (untraced
// step times, else the recorders' cost taken out), with the raw profiled ratio beside it;
// runs, not steps, are the unit of its noise.
struct StepChange {
  int64_t steps_before = 0, steps_after = 0;  // of the representative runs
  Distribution before, after;                 // ms, as recorded, of the representative runs
  std::vector<RunStep> runs_before, runs_after;
  size_t rep_before = 0, rep_after = 0;  // the representative (median) run of each
  // The headline: before / after of the runs' best figures (geometric means over runs),
  // and the range the recorders' correction leaves (set when it is not exact).
  std::optional<double> headline;
  std::optional<double> headline_low, headline_high;
  std::string headline_source;          // the weaker side's RunStep::source
  std::optional<double> speedup;        // the raw profiled ratio: before p50 / after p50 (> 1: AFTER is faster)
  std::optional<double> change_pct;     // of the headline: (after - before) / before, in %
  std::optional<double> plain_speedup;  // the recorders' cost taken out on both sides (traces)
  // How the noise was judged: "runs" (Welch's t-test on the runs of both sides),
  // "noise-floor" (one run on a side: the change against the run-to-run spread of this
  // machine's A/A record, or the default), "none" (a side without steps).
  std::string noise_method;
  std::optional<double> p_value;       // the runs' test
  std::optional<double> step_p_value;  // Mann-Whitney on the representative runs' steps (one process each)
  double noise_floor = 0;              // the ratio a change must exceed; 0 none applied
  std::string noise_floor_source;      // "A/A record of NVIDIA H100 (3 runs, 2026-12-07)", "default"
  bool within_noise = true;
  std::string noise_note;  // one sentence: the test and its outcome
};

// A named share of step time before and after (ms per step; absent on a side: 0).
struct ShareChange {
  std::string name;
  double before_ms = 0, after_ms = 0;
  double before_pct = 0, after_pct = 0;
};

struct FindingChange {
  std::string id;
  std::string title;  // AFTER's wording when still present, else BEFORE's
  // "resolved", "new", "still"; "unclear": absent from AFTER, but the two sides cannot be
  // compared (a damaged side, a trace against a recording), so not known to be resolved.
  std::string status;
  Severity severity_before = Severity::kInfo, severity_after = Severity::kInfo;
};

// The promise check: what BEFORE's report estimated for a remedy, against the measured
// step-time ratio when the remedy looks applied (its findings are gone in AFTER).
struct PromiseCheck {
  std::string remedy;  // id
  std::string title;
  std::optional<double> predicted;  // BEFORE's estimated speedup
  std::optional<double> measured;   // StepChange::speedup, when the remedy counts as applied
  // "applied" (all its findings resolved), "partly" (some resolved, or all still present
  // but shrunk to at most half their share of the step), "not-applied" (still present),
  // "unknown" (it names no finding of BEFORE).
  std::string applied;
  bool shared = false;                        // other applied remedies share the measured gain: ambiguous
  std::string note;                           // one sentence for people
  std::optional<double> predicted_range_end;  // the other end of `predicted`, when it was a range
};

struct RunDiff {
  DiffSide before, after;  // the representative runs: the median run of each side
  StepChange step;
  std::vector<ShareChange> categories;      // breakdown.category_costs
  std::vector<ShareChange> kernel_classes;  // breakdown.busy_by_class
  std::vector<ShareChange> idle_causes;     // breakdown.idle_by_cause
  std::vector<FindingChange> findings;      // resolved, then new, then still present
  std::vector<PromiseCheck> promises;       // BEFORE's remedies, ranked as there
  std::vector<std::string> notes;           // caveats: other device, other step source
  // The same-job check (analyses/fingerprint.h): "same", "different", "unknown".
  std::string same_job = "unknown";
  std::optional<double> kernel_similarity, shape_similarity;
};

}  // namespace chokepoint::report
