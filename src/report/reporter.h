// Reporters: one interface, one file per format (after google/benchmark's reporters).
#pragma once

#include <memory>
#include <ostream>
#include <span>
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

// One report format: its name, another name it answers to ("" for none), its maker.
// reporter_registry.cc holds the one list; help, errors and validation read it.
struct ReporterFormat {
  std::string_view name;
  std::string_view alias;
  std::unique_ptr<Reporter> (*make)();
};
std::span<const ReporterFormat> reporter_registry();

// "text", "json", "md" (alias "markdown"), "html"; null for an unknown format.
std::unique_ptr<Reporter> make_reporter(std::string_view format);
// The names make_reporter accepts, for errors: "text, json, md (markdown), html".
std::string reporter_formats();
// The formats' names, for help: "text, json, md, html".
std::string reporter_names();

}  // namespace chokepoint::report
