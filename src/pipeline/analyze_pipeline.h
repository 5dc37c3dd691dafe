// The analyze pipeline: import -> model -> analyses -> one diagnosis -> report, for every
// input `analyze` takes (traces, a recording of `run`, a recording with its traces). The
// CLI's `analyze`, `run` and `watch` hand the Report to a reporter.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "importers/importer.h"
#include "pipeline/inputs.h"
#include "pipeline/machine_context.h"
#include "report/report.h"

namespace chokepoint::pipeline {

struct AnalyzeOptions {
  CeilingsOptions ceilings;
};

// Imports `paths` (files or directories, or one recording directory), analyzes them and
// diagnoses. Fails when nothing could be imported or a named ceilings file is unreadable;
// odd input becomes import stats in the report.
Result<report::Report> analyze_paths(const std::vector<std::string>& paths, const importers::ImportOptions& io = {},
                                     const AnalyzeOptions& ao = {});

// The same for inputs already loaded: the samples of a recording and the traces are
// evidence for one diagnosis.
Result<report::Report> analyze_inputs(const Inputs& in, const AnalyzeOptions& ao = {});

}  // namespace chokepoint::pipeline
