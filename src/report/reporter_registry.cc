// The list of report formats (one explicit list, no static-init registration): a new
// reporter is one line here.
#include "report/html_reporter.h"
#include "report/json_reporter.h"
#include "report/markdown_reporter.h"
#include "report/reporter.h"
#include "report/text_reporter.h"

namespace chokepoint::report {
namespace {

template <typename T>
std::unique_ptr<Reporter> make() {
  return std::make_unique<T>();
}

constexpr ReporterFormat kFormats[] = {
    {"text", "", make<TextReporter>},
    {"json", "", make<JsonReporter>},
    {"md", "markdown", make<MarkdownReporter>},
    {"html", "", make<HtmlReporter>},
};

}  // namespace

std::span<const ReporterFormat> reporter_registry() { return kFormats; }

std::unique_ptr<Reporter> make_reporter(std::string_view format) {
  for (const ReporterFormat& f : kFormats) {
    if (!format.empty() && (format == f.name || format == f.alias)) return f.make();
  }
  return nullptr;
}

std::string reporter_formats() {
  std::string s;
  for (const ReporterFormat& f : kFormats) {
    if (!s.empty()) s += ", ";
    s += f.name;
    if (!f.alias.empty()) s.append(" (").append(f.alias).append(")");
  }
  return s;
}

std::string reporter_names() {
  std::string s;
  for (const ReporterFormat& f : kFormats) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

}  // namespace chokepoint::report
