// The machine-readable report: the "chokepoint.report/1" contract (docs/ARCHITECTURE.md
// "Report contract"). Keys keep their insertion order so that the output is stable and
// diffs of two reports line up.
#pragma once

#include <nlohmann/json.hpp>

#include "report/reporter.h"

namespace chokepoint::report {

// The report as a JSON value (also what other formats embed, e.g. an HTML page).
// Floats keep kJsonSignificantDigits significant digits; unknown values are null.
// timings: also analysis_seconds (RenderOptions::timings); without, the same input gives
// byte-identical JSON.
nlohmann::ordered_json report_to_json(const Report& r, bool timings = false);

class JsonReporter final : public Reporter {
 public:
  Status write(const Report& r, std::ostream& out, const RenderOptions& opts) const override;
};

}  // namespace chokepoint::report
