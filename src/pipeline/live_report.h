// The report of a live recording (`run`, `watch`, `analyze DIR` of a recording): read
// the directory, summarize the samples (analyses/live), run the sample rules and fill
// the same Report the trace path fills, with its `live` section set.
#pragma once

#include <string>

#include "analyses/live/live_analysis.h"
#include "base/status.h"
#include "report/report.h"
#include "rules/diagnose.h"
#include "samples/recording_reader.h"

namespace chokepoint::pipeline {

// True when `path` is a directory holding a recording (meta.json or samples.jsonl of
// docs/RECORDING.md).
bool is_recording_dir(const std::string& path);

Result<report::Report> analyze_recording_dir(const std::string& dir);

report::Report build_live_report(const std::string& dir, const samples::Recording& rec,
                                 const analyses::live::LiveAnalysis& la, const rules::Diagnosis& d);

}  // namespace chokepoint::pipeline
