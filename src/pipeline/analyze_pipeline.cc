#include "pipeline/analyze_pipeline.h"

#include <chrono>

#include "analyses/analysis.h"
#include "pipeline/build_report.h"
#include "pipeline/live_report.h"
#include "rules/diagnose.h"

namespace chokepoint::pipeline {

Result<report::Report> analyze_paths(const std::vector<std::string>& paths,
                                     const importers::ImportOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  auto in = load_inputs(paths, opts);
  if (!in.ok()) return in.status();
  report::Report r = analyze_inputs(in.value());
  r.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

report::Report analyze_inputs(const Inputs& in) {
  // A live recording is analyzed from its samples (and its traces); traces from their events.
  if (in.recording) return recording_report(in);
  const analyses::Analysis a = analyses::analyze(in.tl);
  const rules::Diagnosis d = rules::diagnose(in.tl, a);
  return build_report(in.tl, a, d, in.stats);
}

}  // namespace chokepoint::pipeline
