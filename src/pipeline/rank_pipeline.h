// `analyze` of the ranks of a distributed job (pipeline/rank_inputs.h): each rank imported,
// analyzed and reduced to its summary on its own, several at once on the cores present
// (one timeline per worker in memory, never all ranks'); then the clocks of several nodes
// aligned, the cross-rank analysis, and one diagnosis over the detailed rank's trace and
// the ranks side by side (docs/DISTRIBUTED.md).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "importers/importer.h"
#include "pipeline/analyze_pipeline.h"
#include "pipeline/rank_inputs.h"
#include "report/report.h"

namespace chokepoint::pipeline {

// `workers` 0: one per core, at most one per rank.
Result<report::Report> analyze_rank_inputs(const std::vector<RankInput>& ranks, const std::vector<std::string>& paths,
                                           const importers::ImportOptions& io = {}, const AnalyzeOptions& ao = {},
                                           int workers = 0);

}  // namespace chokepoint::pipeline
