// The report's views of single steps (report.h): each step's busy and idle parts, and
// the strip of the median step (the launching thread, each stream, the idle gaps).
#pragma once

#include "analyses/analysis.h"
#include "report/report.h"
#include "timeline/model.h"

namespace chokepoint::pipeline {

void add_step_views(report::Report& r, const timeline::Timeline& tl, const analyses::Analysis& a);

}  // namespace chokepoint::pipeline
