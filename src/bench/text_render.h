// Renders a judged profile as text for a person: per GPU a table of testcase, measured,
// reference (published or expected), percent of it, verdict, with the likely cause
// under each result that is not ok, then the roofline ridge points.
#pragma once

#include <string>

#include "machine/profile.h"

namespace chokepoint::bench {

struct TextOptions {
  int width = 100;     // wrap causes and notes at this many columns
  bool color = false;  // ANSI colour for verdicts
  bool notes = false;  // also print each result's method note
};

std::string render_text(const machine::Profile& p, const TextOptions& o = {});

// "53.1 GB/s", "790 TFLOP/s", "4.92 us": three significant digits, unit kept.
std::string format_value(double v, const std::string& unit);

}  // namespace chokepoint::bench
