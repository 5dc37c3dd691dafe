#include "pipeline/analyze_pipeline.h"

#include "analyses/stacks/trace_stacks.h"
#include "pipeline/host_attribution.h"

#include <chrono>
#include <optional>

#include "analyses/analysis.h"
#include "analyses/live/live_analysis.h"
#include "base/stat_catalogue.h"
#include "pipeline/build_report.h"
#include "pipeline/live_report.h"
#include "rules/diagnose.h"

namespace chokepoint::pipeline {

Result<report::Report> analyze_paths(const std::vector<std::string>& paths, const importers::ImportOptions& io,
                                     const AnalyzeOptions& ao) {
  const auto t0 = std::chrono::steady_clock::now();
  auto in = load_inputs(paths, io);
  if (!in.ok()) return in.status();
  auto r = analyze_inputs(in.value(), ao);
  if (!r.ok()) return r.status();
  r->analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Result<report::Report> analyze_inputs(const Inputs& in, const AnalyzeOptions& ao) {
  auto ctx = resolve_machine_context(analyses::device_specs(in.tl), ao.ceilings);
  if (!ctx.ok()) return ctx.status();
  std::optional<analyses::live::LiveAnalysis> la;
  if (in.recording) {
    la = analyses::live::analyze_recording(*in.recording);
    ctx->cpus = la->host.cpu_count;
    int workers = 0;
    for (const auto& p : la->processes) workers += p.meta.role == samples::ProcessRole::kDataLoaderWorker;
    if (!la->processes.empty()) ctx->loader_workers = workers;
  }
  // A recording is judged from its traces too when `run --trace` left any that read.
  const bool trace = !in.recording || (in.trace_status.ok() && in.tl.gpu_ops.size() > 0);
  std::optional<analyses::Analysis> a;
  if (trace) a = analyses::analyze(in.tl, ctx.value());

  std::optional<rules::TraceEvidence> te;
  std::optional<rules::SampleEvidence> se;
  std::optional<rules::StackEvidence> ke;
  rules::EvidenceSet ev;
  if (a) ev.trace = &te.emplace(rules::TraceEvidence{in.tl, *a, &in.stats});
  if (la) ev.samples = &se.emplace(rules::SampleEvidence{*in.recording, *la});
  std::optional<analyses::HostAttribution> host;
  std::vector<analyses::GilProcess> gil;
  // Python stacks: py-spy's from the recording, else a torch.profiler trace's own
  // (with_stack=True).
  std::optional<samples::PyStacks> trace_stacks;
  if (!in.stacks && a) {
    if (auto ps = analyses::python_stacks_from_trace(in.tl); !ps.empty()) trace_stacks = std::move(ps);
  }
  const samples::PyStacks* stacks = in.stacks ? &*in.stacks : trace_stacks ? &*trace_stacks : nullptr;
  static const analyses::HostAttribution kNoAttribution;
  if (stacks != nullptr) {
    host = attribute_host(*stacks, in.recording ? &*in.recording : nullptr, la ? &*la : nullptr, a ? &in.tl : nullptr,
                          a ? &*a : nullptr);
    // Without GPU idle time to charge (no GPU metrics, no trace) the stacks still measure
    // GIL waiting.
    const int64_t steps = host && a && !a->windows.whole_trace ? a->steps() : 0;
    ev.stacks = &ke.emplace(rules::StackEvidence{host ? *host : kNoAttribution, steps});
    if (la && in.stacks) {
      gil = analyses::gil_waiting(*in.stacks, in.recording->samples, la->tick_ns, la->start_ns, la->end_ns);
      ke->gil = &gil;
      ke->run_s = la->duration_s;
    }
  }
  const rules::Diagnosis d = rules::diagnose(ev);
  auto with_host = [&](report::Report r) {
    r.host = host;
    if (host && ke) r.host_steps = ke->steps;
    if (in.recording) r.stacks_note = in.stacks_problem.empty() ? in.recording->meta.stacks.note : in.stacks_problem;
    if (!host && stacks != nullptr && r.stacks_note.empty()) {
      r.stacks_note = "sampled, but there is no GPU idle time to charge to them (no GPU metrics, or the GPU was never active)";
    }
    return r;
  };

  if (!la) return with_host(build_report(in.tl, *a, d, in.stats));
  report::Report live = with_host(build_live_report(in.recording_dir, *in.recording, *la, d));
  if (!a) {
    // Nothing traced (another CUPTI client held every process, or no CUDA work): the
    // samples' report stands, with what the trace files say about why.
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
  // `run --trace`: the trace's figures, the samples' section and stats, one diagnosis.
  report::Report r = with_host(build_report(in.tl, *a, d, in.stats));
  r.inputs.insert(r.inputs.begin(), live.inputs.front());
  for (auto& st : live.import_stats) r.import_stats.push_back(std::move(st));
  r.live = std::move(live.live);
  return r;
}

}  // namespace chokepoint::pipeline
