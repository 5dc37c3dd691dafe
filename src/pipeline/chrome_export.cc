#include "pipeline/chrome_export.h"

#include <optional>

#include "analyses/analysis.h"
#include "analyses/idle_gaps.h"
#include "pipeline/finding_marks.h"
#include "pipeline/machine_context.h"
#include "rules/diagnose.h"

namespace chokepoint::pipeline {

Status export_chrome_trace(const Inputs& in, std::ostream& out, exporters::ChromeTraceStats* stats) {
  // The events, the step windows the analyses use, and where the trace's findings are:
  // the GPU's idle gaps by cause and a marker per finding instance (the verdict itself
  // stays in the report).
  std::optional<analyses::Analysis> a;
  exporters::ChromeFindingTracks marks;
  if (in.tl.event_count() > 0) {
    auto ctx = resolve_machine_context(analyses::device_specs(in.tl), {});
    a = ctx.ok() ? analyses::analyze(in.tl, ctx.value()) : analyses::analyze(in.tl);
    const rules::Diagnosis d = rules::diagnose(in.tl, *a);
    marks.idle = analyses::idle_gaps(in.tl, a->index, a->windows);
    marks.markers = finding_markers(in.tl, *a, d.findings, marks.idle);
  }
  return exporters::write_chrome_trace(in.tl, in.recording ? &*in.recording : nullptr, a ? &a->windows : nullptr, out,
                                       stats, a ? &marks : nullptr);
}

}  // namespace chokepoint::pipeline
