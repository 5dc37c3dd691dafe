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
    {Format::kText, make<TextReporter>},
    {Format::kJson, make<JsonReporter>},
    {Format::kMarkdown, make<MarkdownReporter>},
    {Format::kHtml, make<HtmlReporter>},
};

}  // namespace

std::span<const ReporterFormat> reporter_registry() { return kFormats; }

std::unique_ptr<Reporter> make_reporter(Format format) {
  for (const ReporterFormat& f : kFormats) {
    if (f.format == format) return f.make();
  }
  return nullptr;
}

std::unique_ptr<Reporter> make_reporter(std::string_view format) {
  auto f = parse_format(format, kAnalyzeFormats);
  return f.ok() ? make_reporter(f.value()) : nullptr;
}

}  // namespace chokepoint::report
