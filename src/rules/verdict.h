// The verdict: which bottleneck category costs the most time, and how sure that is
// (diagnose.h documents the confidence). From a trace: the breakdown's idle causes and
// busy classes (verdict_trace.cc). From live samples alone: the GPU's busy share and the
// host-side findings that explain its idle time (verdict_samples.cc). Internal to rules/.
#pragma once

#include <string>
#include <vector>

#include "rules/diagnose.h"

namespace chokepoint::rules {

struct Verdict {
  Category bound = Category::kUnknown;
  double confidence = 0;
  std::vector<CategoryCost> costs;  // the verdict's category first
  std::string lead;                 // the summary's first clause, in numbers
  std::string lead_finding;         // id of the finding the lead names, if it names one
  std::string unknown_reason;
};

Verdict trace_verdict(const TraceEvidence& t);

// May demote host-side findings to info when the GPU is busy most of the time (they do not
// limit the run now) and reorders them so.
Verdict sample_verdict(const SampleEvidence& s, std::vector<Finding>& findings);

// Categories whose findings explain a starved GPU (transfer: copies the CPU paces).
bool host_side(Category c);

}  // namespace chokepoint::rules
