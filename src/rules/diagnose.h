// Diagnosis: run every rule, rank the findings, and name the verdict: the bottleneck
// category that costs the most step time (idle time by cause, busy time by kernel class),
// taken among the idle causes when the GPU is idle most of the step and among the busy
// classes otherwise.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rules/rule.h"

namespace chokepoint::rules {

struct CategoryCost {
  Category category;
  TimeNs ns = 0;          // over all analyzed windows
  double pct = 0;         // of the analyzed time
};

struct Diagnosis {
  std::vector<Finding> findings;        // ranked: largest projected saving first
  std::vector<CategoryCost> costs;      // every category with a cost: the verdict's first, then largest first
  Category bound = Category::kUnknown;
  double confidence = 0;                // top cost / (top + runner-up)
  std::string summary;                  // one sentence
};

// Costs of step time per category, from the breakdown.
std::vector<CategoryCost> category_costs(const analyses::Analysis& a);

Diagnosis diagnose(const timeline::Timeline& tl, const analyses::Analysis& a);

// The diagnosis of a live recording: every rule with a sample evaluator, ranked, and a
// verdict from the samples (diagnose_samples.cc says how).
Diagnosis diagnose_samples(const samples::Recording& rec, const analyses::live::LiveAnalysis& la);

}  // namespace chokepoint::rules
