// Which range names name one iteration of a training or inference loop: the importers
// turn such NVTX / user ranges into steps (importers/step_ranges.h) and the CUPTI tracer
// counts them to open and close its trace windows (tracer/window.h), so both agree on
// what a step is.
#pragma once

#include <cstdint>
#include <string_view>

namespace chokepoint::timeline {

// True when `name` names one iteration: "step", "step 12", "train_step#3", "Iteration 7",
// "iter_2", "ProfilerStep#5" (case-insensitive; the words step, iteration, iter, optionally
// after train/training, then separators and a number, nothing else). `number` gets the
// number, -1 when there is none.
bool step_range_number(std::string_view name, int64_t* number);

}  // namespace chokepoint::timeline
