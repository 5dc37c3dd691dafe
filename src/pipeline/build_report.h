// Turns a timeline, its analysis and its diagnosis into the Report reporters render.
#pragma once

#include "analyses/analysis.h"
#include "report/report.h"
#include "rules/diagnose.h"
#include "timeline/import_stats.h"

namespace chokepoint::pipeline {

// The diagnosis's verdict, findings and remedies into the report: the one place a
// diagnosis (of a trace, of live samples, or both) reaches a report.
void apply_diagnosis(report::Report& r, const rules::Diagnosis& d);

report::Report build_report(const timeline::Timeline& tl, const analyses::Analysis& a, const rules::Diagnosis& d,
                            const timeline::ImportStats& stats);

}  // namespace chokepoint::pipeline
