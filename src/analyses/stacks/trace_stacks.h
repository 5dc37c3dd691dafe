// Python stacks from a trace: torch.profiler(with_stack=True) records every Python call as
// a `python_function` range on its thread ("train.py(131): train", "<built-in method item
// of Tensor object at 0x7f..>", "nn.Module: Linear_0"). Nested ranges of one thread are
// its stack over time: they become the stack segments of samples/stacks.h, so a traced
// run gets the same host hot spots as a sampled one, from exact call times.
#pragma once

#include "samples/stacks.h"
#include "timeline/model.h"

namespace chokepoint::analyses {

// Empty when the trace has no python_function ranges.
samples::PyStacks python_stacks_from_trace(const timeline::Timeline& tl);

// One python_function name as a frame: "path/f.py(12): fn" -> {fn, path/f.py, 12};
// a built-in -> {"item", "<built-in>", 0}; "nn.Module: Linear_0" -> {"Linear", "<nn.Module>", 0}.
samples::PyFrame frame_of_python_function(std::string_view name);

}  // namespace chokepoint::analyses
