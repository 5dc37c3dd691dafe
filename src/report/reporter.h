// Reporters: one interface, one file per format (after google/benchmark's reporters).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"
#include "report/report.h"
#include "report/style.h"

namespace chokepoint::report {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status write(const Report& r, std::ostream& out, const RenderOptions& opts) const = 0;
};

// "text", "json", "md" (alias "markdown"); null for an unknown format.
std::unique_ptr<Reporter> make_reporter(std::string_view format);
// The names make_reporter accepts, for help and errors.
const char* reporter_formats();

}  // namespace chokepoint::report
