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
  // A live recording is analyzed from its samples; traces from their events.
  for (const std::string& p : paths) {
    if (!is_recording_dir(p)) continue;
    if (paths.size() > 1) {
      return Status::Error(p + " is a chokepoint recording: analyze it on its own, not together with other inputs");
    }
    return analyze_recording_dir(p);
  }
  timeline::Timeline tl;
  timeline::ImportStats stats;
  Status s = importers::import_paths(paths, tl, stats, opts);
  if (!s.ok()) return s;
  const analyses::Analysis a = analyses::analyze(tl);
  const rules::Diagnosis d = rules::diagnose(tl, a);
  report::Report r = build_report(tl, a, d, stats);
  r.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace chokepoint::pipeline
