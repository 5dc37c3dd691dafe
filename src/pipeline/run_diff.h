// `chokepoint diff BEFORE AFTER`: each side is a trace, a directory of traces, a recording
// of `run`, or a JSON report of `analyze --format json`, in any mix; traces and recordings
// go through the analyze pipeline, reports are read back. The comparison itself
// (compare_reports) works on two Reports.
#pragma once

#include <string>

#include "base/status.h"
#include "importers/importer.h"
#include "pipeline/analyze_pipeline.h"
#include "report/diff.h"

namespace chokepoint::pipeline {

// Significance level of the step-time test: a change with p >= this is within noise.
// 0.05 is the usual level; with 3 steps a side the exact test cannot reach it (p >= 0.1),
// so such a change is reported as within noise however large, and the note says why.
inline constexpr double kNoiseAlpha = 0.05;

// Reads and analyzes one side.
Result<report::DiffSide> load_diff_side(const std::string& path, const importers::ImportOptions& io = {},
                                        const AnalyzeOptions& ao = {});

report::RunDiff compare_reports(report::DiffSide before, report::DiffSide after);

}  // namespace chokepoint::pipeline
