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

// The median step, before and after, and whether the change stands out of the noise.
struct StepChange {
  int64_t steps_before = 0, steps_after = 0;
  Distribution before, after;        // ms
  std::optional<double> speedup;     // before p50 / after p50 (> 1: AFTER is faster)
  std::optional<double> change_pct;  // (after p50 - before p50) / before p50, in %
  // The same ratio with each recorder's own cost taken out (Report::replay's plain step,
  // traces only): what the step would take unprofiled, when the profiler's per-op cost
  // weighs differently on the two sides.
  std::optional<double> plain_speedup;
  // How the noise was judged: "mann-whitney" (both sides have step samples),
  // "ranges" (p50 against the other side's min..max), "none" (a side without steps).
  std::string noise_method;
  std::optional<double> p_value;  // mann-whitney
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
  DiffSide before, after;
  StepChange step;
  std::vector<ShareChange> categories;      // breakdown.category_costs
  std::vector<ShareChange> kernel_classes;  // breakdown.busy_by_class
  std::vector<ShareChange> idle_causes;     // breakdown.idle_by_cause
  std::vector<FindingChange> findings;      // resolved, then new, then still present
  std::vector<PromiseCheck> promises;       // BEFORE's remedies, ranked as there
  std::vector<std::string> notes;           // caveats: other device, other step source
};

}  // namespace chokepoint::report
