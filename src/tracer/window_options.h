// The trace window that `run`/`watch`'s options ask for (--trace, --trace-steps,
// --trace-time, --trace-every), as the text CHOKEPOINT_TRACE_WINDOW carries to the tracer
// (window.h). Apart from window.h: the injection library does not need it.
#pragma once

#include <string>

#include "base/status.h"

namespace chokepoint::tracer {

struct WindowOptions {
  std::string trace;       // "", "whole" or "on-demand"
  std::string steps;       // --trace-steps WARMUP:COUNT
  std::string time;        // --trace-time START:LENGTH
  std::string every;       // --trace-every DURATION
  std::string first_word;  // the command's first word (`--trace on-demand` without '=' makes it the command)
};

// "" for the whole job; a kUsage error that says which option is wrong and how to write it.
Result<std::string> window_from_options(const WindowOptions& o);

}  // namespace chokepoint::tracer
