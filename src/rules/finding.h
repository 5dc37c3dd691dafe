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
struct Evidence {
  std::string metric;
  double value = 0;
  std::optional<double> threshold;
  std::string unit;
};

struct Finding {
  std::string id;  // catalogue id, e.g. "input-pipeline-stall"
  Category category = Category::kUnknown;
  Severity severity = Severity::kInfo;
  std::string title;   // one line
  std::string detail;  // a few sentences: what was seen, in numbers
  std::vector<Evidence> evidence;
  std::string recommendation;               // the concrete change (PyTorch setting or code)
  std::optional<double> estimated_speedup;  // whole-step speedup if fixed (>= 1), from a what-if
  double time_share_pct = 0;                // share of step time this finding accounts for
  std::vector<std::string> remedies;        // remedy ids (rules/remedies.h) that remove it, best first
  std::vector<std::string> sources;         // evidence it rests on: "trace", "samples", "machine"
};

}  // namespace chokepoint::rules
