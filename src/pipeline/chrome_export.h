// `analyze --format chrome`: the loaded inputs as a Chrome trace-event file
// (exporters/chrome_trace.h), with the step windows the analyses would use.
#pragma once

#include <ostream>

#include "base/status.h"
#include "exporters/chrome_trace.h"
#include "pipeline/inputs.h"

namespace chokepoint::pipeline {

// Writes the timeline of `in`, its step windows and, for a recording, its sampled
// counters and process names. A recording without a trace gives counters only.
Status export_chrome_trace(const Inputs& in, std::ostream& out, exporters::ChromeTraceStats* stats = nullptr);

}  // namespace chokepoint::pipeline
