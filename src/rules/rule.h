// Rules: one descriptor per finding id (registry.cc lists them, docs/ARCHITECTURE.md convention 5).
// A rule owns its id, its category, the remedies that remove what it finds, and one
// evaluator per kind of evidence it can read: a trace (the analyses of a timeline, with
// the remedies' what-ifs), live samples (a recording of `run`/`watch`), static machine
// facts (what `doctor` collects). The engine (diagnose.h) runs each rule once over all
// the evidence present and merges what its evaluators found into one finding.
// Thresholds are named constants in the rule's file with a comment saying where the
// number comes from.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analyses/analysis.h"
#include "analyses/distributed/cross_rank.h"
#include "analyses/sampled/live_analysis.h"
#include "analyses/stacks/gil.h"
#include "analyses/stacks/hotspots.h"
#include "machine/profile.h"
#include "rules/finding.h"
#include "rules/machine_evidence.h"
#include "timeline/import_stats.h"
#include "timeline/model.h"

namespace chokepoint::rules {

using timeline::TimeNs;

// The analyses of a trace (Kineto, the CUPTI tracer), what-ifs included.
struct TraceEvidence {
  const timeline::Timeline& tl;
  const analyses::Analysis& a;
  const timeline::ImportStats* stats = nullptr;  // what the importers counted, when known
};

// A live recording (`run` / `watch`): the samples and their summaries.
struct SampleEvidence {
  const samples::Recording& rec;
  const analyses::sampled::LiveAnalysis& la;
};

// Python stacks of the job (sampled by py-spy during `run`): the GPU's idle time charged
// to the lines of the job's code (analyses/stacks/hotspots.h).
struct StackEvidence {
  const analyses::HostAttribution& attr;
  int64_t steps = 0;  // iterations in the attributed window, 0 unknown
  // GIL waiting per process (analyses/stacks/gil.h); null when not measured (no thread
  // CPU samples: a trace's stacks alone).
  const std::vector<analyses::GilProcess>* gil = nullptr;
  double run_s = 0;  // the recording's length, for shares
  // The recording's samples (processes: the DataLoader's workers and their CPU); null
  // without them (a trace's stacks alone).
  const analyses::sampled::LiveAnalysis* live = nullptr;
  // The stacks account for the idle time well enough to decide between input, sync and
  // host work: they cover most of it, and there is idle time worth deciding about.
  bool decisive() const {
    return attr.gpu_idle_s > 0.05 * attr.window_s && attr.covered_idle_s >= 0.5 * attr.gpu_idle_s;
  }
};

// The ranks of a distributed job side by side (analyses/distributed/cross_rank.h).
struct RankEvidence {
  const analyses::distributed::DistributedAnalysis& d;
};

// One result of `chokepoint bench` below par (or a pageable copy, judged against pinned),
// with its GPU's profile and the host it ran on: what the rules' bench evaluators read to
// say why (bench/judge.h asks the engine, rules::bench_causes).
struct BenchEvidence {
  machine::BenchGroup group;
  const machine::Measurement& m;
  const machine::GpuProfile& gpu;
  const machine::HostInfo& host;
};

// Everything one diagnosis reads; absent parts are null.
struct EvidenceSet {
  const TraceEvidence* trace = nullptr;
  const SampleEvidence* samples = nullptr;
  const MachineEvidence* machine = nullptr;
  const StackEvidence* stacks = nullptr;
  const RankEvidence* ranks = nullptr;
};

using TraceFn = std::optional<Finding> (*)(const TraceEvidence&);
using SampleFn = std::optional<Finding> (*)(const SampleEvidence&);
// Machine evaluators assess every subject they know (each GPU, the host): doctor shows
// all of them, `run` and `analyze` only those that found something.
using MachineFn = std::vector<Assessment> (*)(const MachineEvidence&);
using StackFn = std::optional<Finding> (*)(const StackEvidence&);
using RanksFn = std::optional<Finding> (*)(const RankEvidence&);
// A bench evaluator: the sentence saying how the rule's condition holds the result back,
// or nothing when it does not apply.
using BenchFn = std::optional<std::string> (*)(const BenchEvidence&);

// A rule is defined in its own file as `extern const Rule NAME_rule = {.id = ..., ...};`
// and listed by one line in registry.cc. The three texts are its `chokepoint explain`
// entry (rules/glossary.h).
struct Rule {
  std::string_view id;
  Category category = Category::kUnknown;
  TraceFn trace = nullptr;
  SampleFn samples = nullptr;
  MachineFn machine = nullptr;
  StackFn stacks = nullptr;
  RanksFn ranks = nullptr;
  BenchFn bench = nullptr;
  // How the engine treats what the rule finds, said here, never by its id in the engine:
  // - where the job's stacks measured GIL waiting (StackEvidence::gil), that measure
  //   decides: a samples-only finding the stacks do not back is dropped;
  bool gil_measure_decides = false;
  // - where the job's stacks account for the GPU's idle time, a samples-only finding its
  //   stacks evaluator does not back is dropped, unless the stacks can miss what it found;
  bool stacks_can_miss = false;
  // - when it fires, remedy `lead_remedy` leads the remedies of finding `lead_for` too;
  std::string_view lead_for = {}, lead_remedy = {};
  // - from live samples: a busy GPU while it fires is bound by transfers, and what it
  //   found is not host work for the samples' verdict.
  bool saturates_the_link = false;
  std::string_view meaning;    // what it means
  std::string_view detection;  // how chokepoint detects it
  std::string_view action;     // what to do
};

// Every rule, in a fixed order.
const std::vector<Rule>& all_rules();
const Rule* find_rule(std::string_view id);

// The trace evaluators (one file per rule).
std::optional<Finding> input_pipeline_stall(const TraceEvidence& c);
std::optional<Finding> launch_overhead(const TraceEvidence& c);
std::optional<Finding> host_sync(const TraceEvidence& c);
std::optional<Finding> host_work(const TraceEvidence& c);
std::optional<Finding> allocator_churn(const TraceEvidence& c);
std::optional<Finding> pageable_memcpy(const TraceEvidence& c);
std::optional<Finding> transfer_bound(const TraceEvidence& c);
std::optional<Finding> no_tensor_cores(const TraceEvidence& c);
std::optional<Finding> memory_bound_elementwise(const TraceEvidence& c);
std::optional<Finding> memory_bound_matmul(const TraceEvidence& c);
std::optional<Finding> low_occupancy(const TraceEvidence& c);
std::optional<Finding> unfused_optimizer(const TraceEvidence& c);
std::optional<Finding> nchw_layout(const TraceEvidence& c);

// The sample evaluators (the rule's file, or rules/sampled/ for sample-only rules).
std::optional<Finding> input_pipeline_stall_samples(const SampleEvidence& c);
std::optional<Finding> launch_overhead_samples(const SampleEvidence& c);
std::optional<Finding> host_work_samples(const SampleEvidence& c);
std::optional<Finding> pageable_memcpy_samples(const SampleEvidence& c);
std::optional<Finding> no_tensor_cores_samples(const SampleEvidence& c);
std::optional<Finding> smi_util_misleading(const SampleEvidence& c);
std::optional<Finding> pcie_saturated(const SampleEvidence& c);
std::optional<Finding> pcie_link_degraded(const SampleEvidence& c);
std::optional<Finding> clock_throttled(const SampleEvidence& c);
std::optional<Finding> gpu_memory_near_full(const SampleEvidence& c);
std::optional<Finding> host_swapping(const SampleEvidence& c);
std::optional<Finding> cpu_oversubscribed(const SampleEvidence& c);
std::optional<Finding> gil_contention(const SampleEvidence& c);
std::optional<Finding> io_wait(const SampleEvidence& c);
std::optional<Finding> cpu_steal(const SampleEvidence& c);
std::optional<Finding> numa_mismatch(const SampleEvidence& c);

// The Python-stack evaluators (rules/stacks/).
std::optional<Finding> host_sync_stacks(const StackEvidence& c);
std::optional<Finding> input_pipeline_stall_stacks(const StackEvidence& c);
std::optional<Finding> host_work_stacks(const StackEvidence& c);
std::optional<Finding> pageable_memcpy_stacks(const StackEvidence& c);
std::optional<Finding> gil_contention_stacks(const StackEvidence& c);

// The cross-rank evaluators (one file per rule).
std::optional<Finding> straggler_rank(const RankEvidence& c);
std::optional<Finding> exposed_communication(const RankEvidence& c);

// Shared by rules: severity from the speedup its fix promises (pass 0 when unknown) or,
// without one, from the share of step time the finding accounts for.
Severity severity_for(double time_share_pct, double speedup);
// A finding with share, estimate and the severity they imply; the rule then fills title,
// detail, evidence, recommendation and remedies. Its id and category are the rule's: the
// engine stamps them from the descriptor (diagnose.cc), so no evaluator repeats them.
Finding new_finding(double time_share_pct, std::optional<double> estimated_speedup);
Evidence evidence(std::string metric, double value, std::string unit, std::optional<double> threshold = std::nullopt);
// Evidence that counts at or below its threshold (an idle pipe, a degraded link).
Evidence evidence_at_most(std::string metric, double value, std::string unit, double threshold);
// Evidence shown against a ceiling it triggers nothing by (achieved vs HBM bandwidth).
Evidence evidence_vs_ceiling(std::string metric, double value, std::string unit, std::optional<double> ceiling);
// The estimated whole-step speedup of a remedy's what-if on this trace, if it applied.
std::optional<double> what_if(const TraceEvidence& c, analyses::whatif::Remedy r);
// The same across the ranks of a distributed job.
std::optional<double> what_if(const RankEvidence& c, analyses::whatif::Remedy r);

}  // namespace chokepoint::rules
