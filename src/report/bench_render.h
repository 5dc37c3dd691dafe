// Renders a judged profile as text for a person: per GPU a table of testcase, measured,
// reference (published or expected), percent of it, verdict, with the likely cause
// under each result that is not ok, then the roofline ridge points. Options: colour for
// the verdicts, causes and notes wrapped at the width, `notes` adds each result's
// method note. The profile comes judged (bench/judge.h: machine/verdicts.h).
#pragma once

#include <string>

#include "machine/profile.h"
#include "report/formats.h"
#include "report/style.h"

namespace chokepoint::report {

std::string render_bench_text(const machine::Profile& p, const RenderOptions& o = {});
// One of kBenchFormats: the text above, or the profile's JSON (machine/profile.h).
std::string render_bench(const machine::Profile& p, Format format, const RenderOptions& o = {});

// "53.1 GB/s", "790 TFLOP/s", "4.92 us": three significant digits, unit kept.
std::string format_measured(double v, const std::string& unit);

}  // namespace chokepoint::report
