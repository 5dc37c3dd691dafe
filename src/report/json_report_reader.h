// A JSON report ("chokepoint.report/1", written by `analyze --format json`) read back into
// a Report, for `diff`: the parts a comparison needs (window and step samples, breakdown,
// verdict, findings, remedies, top kernels, roofline, device), not every field.
#pragma once

#include <string_view>

#include "base/status.h"
#include "report/report.h"

namespace chokepoint::report {

// True when `head` (the first bytes of a file) starts a chokepoint JSON report.
bool looks_like_json_report(std::string_view head);

// Fails (kInput) when `text` is not JSON or not a report of this schema.
Result<Report> report_from_json(std::string_view text);

}  // namespace chokepoint::report
