// The diagnosis engine: every rule runs once over all the evidence present (a trace, live
// samples, machine facts); what a rule's evaluators found is one finding, resting on the
// evidence that agrees with it. Findings name remedies; the remedies carry the estimates
// (a trace's what-ifs, else the samples'), ranked by gain: the headline is the remedy
// that gains the most, never one under 1.05x. The verdict names the bottleneck category
// that costs the most time (verdict.cc says how for a trace and for samples alone), or
// `unknown` with the reason when the evidence cannot say.
//
// Confidence (0..1) is the share of the explained time the verdict's category holds
// against the runner-up, top / (top + second), scaled down for weaker evidence: samples
// alone (x0.7; x0.7 again for a busy GPU without GPM), a trace cut off mid-file (x0.8),
// the host alone (0.4). 0.9 means the runner-up is a ninth of the verdict's cost.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/data_loss.h"
#include "rules/remedies.h"
#include "rules/rule.h"

namespace chokepoint::rules {

struct CategoryCost {
  Category category;
  TimeNs ns = 0;   // over all analyzed windows
  double pct = 0;  // of the analyzed time
};

struct Diagnosis {
  std::vector<Finding> findings;       // ranked: the findings of the best remedy first
  std::vector<RemedyAdvice> remedies;  // ranked: the headline first
  std::vector<CategoryCost> costs;     // every category with a cost: the verdict's first, then largest first
  Category bound = Category::kUnknown;
  double confidence = 0;
  std::string summary;         // one sentence
  std::string unknown_reason;  // why bound is unknown, when it is
  // The kind of input lost in the largest share (base/data_loss.h), when any was: the
  // confidence is lowered by that share, and from kUntrustedLossShare on there is no verdict.
  std::optional<DataLoss> data_lost;
  // So much input was lost that no gain is promised: findings and remedies carry no
  // estimate, and the report shows no what-ifs.
  bool estimates_withheld = false;
};

// Costs of step time per category, from the breakdown; matrix kernels below the ridge
// point count as memory (analyses/roofline.h).
std::vector<CategoryCost> category_costs(const analyses::Analysis& a);

// The one diagnosis over all the evidence present.
Diagnosis diagnose(const EvidenceSet& ev);

// One rule over the evidence as diagnose() runs it: what its evaluators found, merged,
// with the rule's id and category (the descriptor's). nullopt when it finds nothing.
std::optional<Finding> evaluate_rule(const Rule& r, const EvidenceSet& ev);

// Shorthands: a trace alone, live samples alone.
Diagnosis diagnose(const timeline::Timeline& tl, const analyses::Analysis& a);
Diagnosis diagnose_samples(const samples::Recording& rec, const analyses::sampled::LiveAnalysis& la);

// Every machine assessment (doctor's list): each rule with a machine evaluator, in order.
std::vector<Assessment> assess_machine(const MachineEvidence& m);

// Why a result of `chokepoint bench` is below par: each rule with a bench evaluator that
// applies, in the registry's order, as (rule id, sentence). Empty when none applies
// (bench/judge.cc then says what usually does). Its signature is bench::CauseFinder's.
std::vector<machine::BenchCause> bench_causes(machine::BenchGroup group, const machine::Measurement& m,
                                              const machine::GpuProfile& gpu, const machine::HostInfo& host);

}  // namespace chokepoint::rules
