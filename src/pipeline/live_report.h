// The report of a live recording (`run`, `watch`, `analyze DIR` of a recording): read
// the directory, summarize the samples (analyses/sampled), run the sample rules and fill
// the same Report the trace path fills, with its `live` section set.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "analyses/sampled/live_analysis.h"
#include "base/status.h"
#include "pipeline/analyze_pipeline.h"
#include "pipeline/inputs.h"
#include "report/report.h"
#include "rules/diagnose.h"
#include "samples/recording_reader.h"

namespace chokepoint::pipeline {

// Reads recording `dir` (and the traces `run --trace` left in it) and analyzes it.
Result<report::Report> analyze_recording_dir(const std::string& dir, const AnalyzeOptions& ao = {});

// The report's live section and the samples' verdict (build_report.h does the trace's).

report::Report build_live_report(const std::string& dir, const samples::Recording& rec,
                                 const analyses::sampled::LiveAnalysis& la, const rules::Diagnosis& d);

// The verdict of a run so far, one line for the live view (live::LiveVerdictFn): the same
// engine as the end report, over `ticks` (the last minute). "bound: the lead finding ->
// first remedy (estimate)", and "(unsure: ...)" while the GPU has been active under
// kSureActiveS or the confidence is under a half.
inline constexpr double kSureActiveS = 10.0;
std::string live_verdict_line(const samples::RunMeta& meta, const std::map<int64_t, samples::ProcessMeta>& processes,
                              const std::deque<samples::Tick>& ticks);

}  // namespace chokepoint::pipeline
