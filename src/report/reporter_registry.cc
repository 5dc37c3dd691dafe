// The list of report formats (one explicit list, no static-init registration).
#include "report/json_reporter.h"
#include "report/markdown_reporter.h"
#include "report/reporter.h"
#include "report/text_reporter.h"

namespace chokepoint::report {

std::unique_ptr<Reporter> make_reporter(std::string_view format) {
  if (format == "text") return std::make_unique<TextReporter>();
  if (format == "json") return std::make_unique<JsonReporter>();
  if (format == "md" || format == "markdown") return std::make_unique<MarkdownReporter>();
  return nullptr;
}

const char* reporter_formats() { return "text, json, md (markdown)"; }

}  // namespace chokepoint::report
