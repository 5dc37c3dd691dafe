// Turns a timeline, its analysis and its diagnosis into the Report reporters render.
#pragma once

#include "analyses/analysis.h"
#include "report/report.h"
#include "rules/diagnose.h"
#include "timeline/import_stats.h"

namespace chokepoint::pipeline {

report::Report build_report(const timeline::Timeline& tl, const analyses::Analysis& a, const rules::Diagnosis& d,
                            const timeline::ImportStats& stats);

}  // namespace chokepoint::pipeline
