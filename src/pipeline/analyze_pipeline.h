// The analyze pipeline: import -> model -> analyses -> rules -> report. The CLI's
// `analyze` (and later `run`) call this and hand the Report to a reporter.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "importers/importer.h"
#include "pipeline/inputs.h"
#include "report/report.h"

namespace chokepoint::pipeline {

// Imports `paths` (files or directories), analyzes them and diagnoses. Fails only when
// nothing could be imported; odd input becomes import stats in the report.
Result<report::Report> analyze_paths(const std::vector<std::string>& paths,
                                     const importers::ImportOptions& opts = {});

// The same for inputs already loaded.
report::Report analyze_inputs(const Inputs& in);

}  // namespace chokepoint::pipeline
