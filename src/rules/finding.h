// A finding: one diagnosed problem with its evidence, the change to make, and the gain to
// expect. Produced by rules (one file per rule), rendered by reporters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/severity.h"

namespace chokepoint::rules {

// Bottleneck categories (docs/ARCHITECTURE.md "Report contract").
enum class Category { kInput, kHost, kSync, kTransfer, kCompute, kMemory, kCommunication, kIo, kIdle, kUnknown };
const char* category_name(Category c);  // "input", "host", ...

// One number that supports a finding. `threshold` is the value the rule compares against
// (absent when the number is context only). `unit` is for humans ("%", "ms", "GB/s").
// Which side of its threshold makes an evidence count: the rule fires at or above it
// (a share of the step), at or below it (an idle tensor pipe, a degraded link), or the
// threshold is a ceiling the value is compared with and triggers nothing.
enum class ThresholdSide { kAtLeast, kAtMost, kCeiling };

struct Evidence {
  std::string metric;
  double value = 0;
  std::optional<double> threshold;
  std::string unit;
  ThresholdSide side = ThresholdSide::kAtLeast;
};

const char* threshold_side_name(ThresholdSide s);  // "at_least", "at_most", "ceiling"

struct Finding {
  std::string id;  // catalogue id, e.g. "input-pipeline-stall"
  Category category = Category::kUnknown;
  Severity severity = Severity::kInfo;
  std::string title;   // one line
  std::string detail;  // a few sentences: what was seen, in numbers
  std::vector<Evidence> evidence;
  std::string recommendation;               // the concrete change (PyTorch setting or code)
  std::optional<double> estimated_speedup;  // whole-step speedup if fixed (>= 1), from a what-if
  std::optional<double> speedup_range_end;  // the other end, when its remedy's estimate is a range
  double time_share_pct = 0;                // share of step time this finding accounts for
  std::vector<std::string> remedies;        // remedy ids (rules/remedies.h) that remove it, best first
  std::vector<std::string> sources;         // evidence it rests on: "trace", "samples", "machine"
  std::string estimate_source;              // the source whose what-if gave the estimate; "" the first
  // The remedy whose estimate estimated_speedup is (issue 44: a finding printed "est. 4.0x
  // with cuda-graphs" where 4.0x was bigger-batch's and cuda-graphs' own was 1.00x).
  std::string estimate_remedy;
  // What it found held the run before the GPU's first work (a start-up), not the GPU's
  // active window: a GPU busy afterwards does not make it context (rules/verdict_samples.cc).
  bool before_gpu_work = false;
};

// "bigger-batch": its estimate is of samples per second, not of the step.
bool estimate_is_throughput(const std::string& remedy);

}  // namespace chokepoint::rules
