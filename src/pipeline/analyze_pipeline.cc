#include "pipeline/analyze_pipeline.h"

#include "analyses/fingerprint.h"

#include "analyses/stacks/loop_steps.h"
#include "analyses/stacks/trace_stacks.h"
#include "pipeline/host_attribution.h"
#include "pipeline/rank_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "analyses/analysis.h"
#include "analyses/sampled/live_analysis.h"
#include "base/stat_catalogue.h"
#include "pipeline/build_report.h"
#include "pipeline/live_report.h"
#include "rules/diagnose.h"

namespace chokepoint::pipeline {

namespace {

// Traces of several jobs are not pooled into one (issue 44: a directory of unrelated traces
// read "MFU 113%", "GPU idle 99.9% of 631 s"): refused, naming the groups found.
Status one_job(const Inputs& in) {
  if (in.recording || in.tl.sources.size() < 2) return Status::Ok();
  const std::vector<std::vector<int32_t>> groups = analyses::job_groups(in.tl);
  if (groups.size() < 2) return Status::Ok();
  constexpr size_t kNamed = 3;
  std::string named;
  for (size_t g = 0; g < groups.size() && g < 2 * kNamed; ++g) {
    std::string files;
    for (size_t k = 0; k < groups[g].size() && k < kNamed; ++k) {
      files += (k ? ", " : "") + std::filesystem::path(in.tl.sources[groups[g][k]].path).filename().string();
    }
    if (groups[g].size() > kNamed) files += fmt::format(" and {} more", groups[g].size() - kNamed);
    named += fmt::format("{}job {}: {}", g ? "; " : " ", g + 1, files);
  }
  if (groups.size() > 2 * kNamed) named += fmt::format("; and {} jobs more", groups.size() - 2 * kNamed);
  return Status::Error(ErrorCode::kInput,
                       fmt::format("the inputs are traces of {} different jobs (their kernels barely overlap), which "
                                   "one analysis cannot pool:{}. Analyze one job at a time (a directory per job), or "
                                   "compare two with `chokepoint diff`",
                                   groups.size(), named));
}

}  // namespace

Result<report::Report> analyze_paths(const std::vector<std::string>& paths, const importers::ImportOptions& io,
                                     const AnalyzeOptions& ao) {
  const auto t0 = std::chrono::steady_clock::now();
  // Each input classified, sniffed and parsed once, for the ranks and the import alike.
  InputPlan plan = plan_inputs(paths);
  // The traces of two ranks or more: each rank on its own, then side by side.
  if (const std::vector<RankInput> ranks = rank_inputs(plan); !ranks.empty()) {
    importers::ImportOptions with_heads = io;
    with_heads.heads = &plan.heads;  // each rank's files sniffed from the plan's heads
    auto r = analyze_rank_inputs(ranks, paths, with_heads, ao);
    if (r.ok()) r->analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  auto in = load_inputs(std::move(plan), io);
  if (!in.ok()) return in.status();
  if (Status s = one_job(in.value()); !s.ok()) return s;
  auto r = analyze_inputs(in.value(), ao);
  if (!r.ok()) return r.status();
  r->analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

namespace {

// The live analysis of a recording, with what it tells the machine context (CPUs,
// DataLoader workers).
analyses::sampled::LiveAnalysis analyze_live(const samples::Recording& rec, machine::MachineContext& ctx) {
  analyses::sampled::LiveAnalysis la = analyses::sampled::analyze_recording(rec);
  ctx.cpus = la.host.cpu_count;
  int workers = 0;
  for (const auto& p : la.processes) workers += p.meta.role == samples::ProcessRole::kDataLoaderWorker;
  if (!la.processes.empty()) ctx.loader_workers = workers;
  return la;
}

// The Python stacks' evidence and what it rests on; the evidence set points into it.
struct StackState {
  std::optional<samples::PyStacks> trace_stacks;
  std::optional<samples::PyStacks> merged;  // the run's samples with its bursts
  const samples::PyStacks* stacks = nullptr;
  std::optional<analyses::HostAttribution> host;
  std::vector<analyses::GilProcess> gil;
  std::optional<rules::StackEvidence> ke;
  std::optional<analyses::LoopSteps> loop;  // steps counted in the samples (no trace)
};

// Without a trace, steps come from the job's training loop in the Python stack samples:
// the fast bursts, and the run's own samples when they are fast enough for its step (a
// slow step: more of them than the bursts hold) or no burst found the loop.
std::optional<analyses::LoopSteps> loop_steps_of(const Inputs& in) {
  constexpr double kRunSamplesPerStep = 5;
  std::vector<analyses::LoopSteps> parts;
  for (const auto& b : in.stack_bursts) parts.push_back(analyses::find_loop_steps(b));
  if (in.stacks) {
    analyses::LoopSteps whole = analyses::find_loop_steps(*in.stacks);
    const bool bursts_found = std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.found; });
    if (!bursts_found || (whole.found && !whole.ambiguous && whole.samples_per_step >= kRunSamplesPerStep)) {
      parts.push_back(std::move(whole));
    }
  }
  if (parts.empty()) return std::nullopt;
  return analyses::combine_loop_steps(parts);
}

// The counted steps into the report's window; none when the count is not sure.
void apply_loop_steps(report::Report& r, const analyses::LoopSteps& l) {
  if (!l.found) {
    r.window.step_source = "live samples (no steps: " + l.why_not + ")";
    return;
  }
  if (!l.sure()) {
    r.window.step_source = "live samples (no steps: " + analyses::loop_steps_source(l) + ")";
    return;
  }
  r.window.steps = l.steps;
  r.window.step_source = analyses::loop_steps_source(l);
  std::vector<double> ms;
  for (double v : l.per_step_ns) ms.push_back(v / 1e6);
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size())))];
  };
  r.window.step_time_ms = {l.step_ns / 1e6, at(0.5), at(0.95), ms.front(), ms.back()};
}

void add_stack_evidence(const Inputs& in, const analyses::sampled::LiveAnalysis* la, const analyses::Analysis* a,
                        StackState& st, rules::EvidenceSet& ev) {
  // Python stacks: py-spy's from the recording, else a torch.profiler trace's own
  // (with_stack=True).
  if (!in.stacks && a) {
    if (auto ps = analyses::python_stacks_from_trace(in.tl); !ps.empty()) st.trace_stacks = std::move(ps);
  }
  // The run's own samples with its bursts in their place where they ran: a short job's
  // training may hold a few hundred samples at 20 Hz and thousands in its bursts.
  if (in.stacks && !in.stack_bursts.empty()) st.merged = samples::with_bursts(*in.stacks, in.stack_bursts);
  st.stacks = st.merged ? &*st.merged : in.stacks ? &*in.stacks : st.trace_stacks ? &*st.trace_stacks : nullptr;
  static const analyses::HostAttribution kNoAttribution;
  if (st.stacks == nullptr) return;
  st.host = attribute_host(*st.stacks, in.recording ? &*in.recording : nullptr, la, a ? &in.tl : nullptr, a);
  // Without GPU idle time to charge (no GPU metrics, no trace) the stacks still measure
  // GIL waiting.
  int64_t steps = st.host && a && !a->windows.whole_trace ? a->steps() : 0;
  // Untraced: the analyzed window over the step counted in the samples.
  if (st.host && !a && st.loop && st.loop->sure() && st.loop->step_ns > 0) {
    steps = std::llround(st.host->window_s * 1e9 / st.loop->step_ns);
  }
  ev.stacks = &st.ke.emplace(rules::StackEvidence{st.host ? *st.host : kNoAttribution, steps});
  if (la && in.stacks) {
    st.gil = analyses::gil_waiting(*in.stacks, in.recording->samples, la->start_ns, la->end_ns);
    st.ke->gil = &st.gil;
    st.ke->run_s = la->duration_s;
    st.ke->live = la;
  }
}

report::Report with_host(report::Report r, const Inputs& in, const StackState& st) {
  r.host = st.host;
  if (st.host && st.ke) r.host_steps = st.ke->steps;
  if (in.recording) r.stacks_note = in.stacks_problem.empty() ? in.recording->meta.stacks.note : in.stacks_problem;
  if (!st.host && st.stacks != nullptr && r.stacks_note.empty()) {
    r.stacks_note =
        "sampled, but there is no GPU idle time to charge to them (no GPU metrics, or the GPU was never active)";
  }
  return r;
}

// Nothing traced (another CUPTI client held every process, or no CUDA work): the
// samples' report stands, with what the trace files say about why.
report::Report untraced_live_report(report::Report live, const Inputs& in) {
  for (const auto& st : in.stats.all()) {
    if (st.count > 0) live.import_stats.push_back(st);
  }
  if (!in.trace_status.ok()) {
    const StatDef& def = stat_def(StatId::kTraceUnreadable);
    live.import_stats.push_back({std::string(def.name), def.severity,
                                 stat_description(StatId::kTraceUnreadable, in.trace_status.message()), 1});
  }
  return live;
}

Result<report::Report> analyze_unmarked(const Inputs& in, const AnalyzeOptions& ao) {
  auto ctx = resolve_machine_context(analyses::device_specs(in.tl), ao.ceilings);
  if (!ctx.ok()) return ctx.status();
  std::optional<analyses::sampled::LiveAnalysis> la;
  if (in.recording) la = analyze_live(*in.recording, ctx.value());
  // A recording is judged from its traces too when `run --trace` left any that read.
  const bool trace = !in.recording || (in.trace_status.ok() && in.tl.gpu_ops.size() > 0);
  std::optional<analyses::Analysis> a;
  if (trace) a = analyses::analyze(in.tl, ctx.value());

  std::optional<rules::TraceEvidence> te;
  std::optional<rules::SampleEvidence> se;
  rules::EvidenceSet ev;
  if (a) ev.trace = &te.emplace(rules::TraceEvidence{in.tl, *a, &in.stats});
  if (la) ev.samples = &se.emplace(rules::SampleEvidence{*in.recording, *la});
  StackState st;
  if (la && !a) st.loop = loop_steps_of(in);
  add_stack_evidence(in, la ? &*la : nullptr, a ? &*a : nullptr, st, ev);
  const rules::Diagnosis d = rules::diagnose(ev);

  if (!la) return with_host(build_report(in.tl, *a, d, in.stats), in, st);
  report::Report live = with_host(build_live_report(in.recording_dir, *in.recording, *la, d), in, st);
  if (!a) {
    if (st.loop) apply_loop_steps(live, *st.loop);
    return untraced_live_report(std::move(live), in);
  }
  // `run --trace`: the trace's figures, the samples' section and stats, one diagnosis.
  report::Report r = with_host(build_report(in.tl, *a, d, in.stats), in, st);
  r.inputs.insert(r.inputs.begin(), live.inputs.front());
  for (auto& stat : live.import_stats) r.import_stats.push_back(std::move(stat));
  r.live = std::move(live.live);
  return r;
}

}  // namespace

Result<report::Report> analyze_inputs(const Inputs& in, const AnalyzeOptions& ao) {
  auto r = analyze_unmarked(in, ao);
  if (!r.ok()) return r;
  // What the job is (diff's same-job check): its kernels and shapes, and its script.
  r.value().fingerprint = analyses::job_fingerprint(in.tl);
  if (r.value().live) r.value().fingerprint.program = analyses::program_of(r.value().live->command);
  return r;
}

}  // namespace chokepoint::pipeline
