#include "pipeline/chrome_export.h"

#include <optional>

#include "analyses/index.h"
#include "analyses/steps.h"

namespace chokepoint::pipeline {

Status export_chrome_trace(const Inputs& in, std::ostream& out, exporters::ChromeTraceStats* stats) {
  // Only the step windows, not the whole analysis: the export shows events, not verdicts.
  std::optional<analyses::StepWindows> steps;
  if (in.tl.event_count() > 0) {
    const analyses::TimelineIndex ix = analyses::build_index(in.tl);
    steps = analyses::compute_step_windows(in.tl, ix);
  }
  return exporters::write_chrome_trace(in.tl, in.recording ? &*in.recording : nullptr, steps ? &*steps : nullptr, out,
                                       stats);
}

}  // namespace chokepoint::pipeline
