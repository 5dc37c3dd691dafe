// Reporters: one interface, one file per format (after google/benchmark's reporters).
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "report/formats.h"
#include "report/report.h"
#include "report/style.h"

namespace chokepoint::report {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status write(const Report& r, std::ostream& out, const RenderOptions& opts) const = 0;
};

// The reporter of each format analyze and run offer (report/formats.h kAnalyzeFormats):
// reporter_registry.cc holds the one list of makers.
struct ReporterFormat {
  Format format;
  std::unique_ptr<Reporter> (*make)();
};
std::span<const ReporterFormat> reporter_registry();

std::unique_ptr<Reporter> make_reporter(Format format);
// The same by name ("text", "json", "md" or "markdown", "html"); null for another name.
std::unique_ptr<Reporter> make_reporter(std::string_view format);

}  // namespace chokepoint::report
