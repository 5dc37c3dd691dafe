// Views of a RunDiff (report/diff.h): text for the terminal, Markdown for a pull request,
// JSON ("chokepoint.diff/1", docs/ARCHITECTURE.md "Diff contract"), and one self-contained
// HTML page (diff_html.cc).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "report/diff.h"
#include "report/style.h"

namespace chokepoint::report {

// One of kDiffFormats by name (report/formats.h); kUsage for another name.
Status write_diff(const RunDiff& d, std::string_view format, std::ostream& out, const RenderOptions& opts);

nlohmann::ordered_json diff_to_json(const RunDiff& d);
Status write_diff_html(const RunDiff& d, std::ostream& out);  // diff_html.cc

// The parts each view shares. The headline: "1.93x faster (1.44x to 2.78x), without the
// recorders' own cost", "1.14x slower; within noise", "no step time to compare".
std::string step_change_words(const StepChange& s);
// "2.37x faster", "1.14x slower".
std::string ratio_words(double x);

}  // namespace chokepoint::report
