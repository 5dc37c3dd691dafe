// The report of `chokepoint tune`: the best configuration and its throughput, the
// Pareto set of throughput against peak GPU memory, the largest batch that fits, every
// trial with why it lost (how far below the best, what differs, its own verdict), and
// how many trials the search used against the grid's size. report/tune_render.cc renders
// it (text, JSON or Markdown) from tune_view().
#pragma once

#include <string>
#include <vector>

#include "report/tune_view.h"
#include "tune/search.h"
#include "tune/space.h"

namespace chokepoint::tune {

struct TuneReport {
  std::vector<std::string> command;  // with the {NAME} placeholders
  std::vector<std::string> params;   // the --param texts, as given
  size_t grid_size = 0;
  std::string batch_param;  // "" none
  std::string measure;      // "--metric 'REGEX'" or "steps (CUPTI trace)"
  std::string unit;         // "samples/s", ...
  std::string trials_file;
  SearchResult result;
};

// Why trial `i` lost to the best, in words ("" for the best itself).
std::string why_lost(const TuneReport& r, size_t i);

// The report's view, rendered by report/ (report::render_tune).
report::TuneView tune_view(const TuneReport& r);

}  // namespace chokepoint::tune
