// Remedies: what the user changes. A finding is a symptom; each names the remedies that
// remove it (Finding::remedies), and findings that one remedy removes share its estimate.
// The catalogue holds the change to make; the estimate comes from the remedy's what-if
// (analyses/whatif/) on a trace, or from the samples when there is no trace.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/whatif/whatif.h"

namespace chokepoint::rules {

struct RemedyInfo {
  std::string_view id;
  std::string_view title;                           // "Capture the step in CUDA Graphs"
  std::string_view change;                          // the code or setting to change
  std::optional<analyses::whatif::Remedy> what_if;  // its replay, when there is one
  // Changes what is trained (the batch size): listed, but never the headline while a
  // remedy that keeps the training as it is gains 1.05x or more.
  bool changes_training = false;
  // Its only estimate is the finding's bound: all of that time off the critical path.
  bool upper_bound = false;
  // The change when the finding it removes came with the job's Python stacks, which name
  // the lines (rules/stacks): "" when `change` holds either way.
  std::string_view change_at_lines = {};
  // What its speedup multiplies when that is not the step rate: "samples per second" for a
  // change of the work per step (bigger-batch); "" the step rate.
  std::string_view gain_in = {};
};

// Every remedy, in a fixed order.
const std::vector<RemedyInfo>& all_remedies();
const RemedyInfo* find_remedy(std::string_view id);
const RemedyInfo* find_remedy(analyses::whatif::Remedy r);

// A remedy as a report gives it: the change, the gain, what it assumes, what it removes.
struct RemedyAdvice {
  std::string id;
  std::string title;
  std::string change;
  std::optional<double> estimated_speedup;       // whole step (bigger-batch: samples/s)
  std::optional<double> speedup_range_end;       // the other end, when the estimate is a range (whatif::Estimate)
  std::string estimate_from;                     // "trace what-if", "samples", "" when not estimated
  double step_ms_before = 0, step_ms_after = 0;  // trace what-ifs: per step, without the recorder
  std::string what_changes;                      // what the replay changed, in numbers
  std::vector<std::string> assumptions;
  std::vector<std::string> findings;  // ids of the findings it removes
  bool changes_training = false;
};

}  // namespace chokepoint::rules
