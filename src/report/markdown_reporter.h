// The report as GitHub-flavoured Markdown, for pull requests, issues and notebooks: the
// text report's content with headings, tables and lists instead of terminal layout.
#pragma once

#include "report/reporter.h"

namespace chokepoint::report {

class MarkdownReporter final : public Reporter {
 public:
  Status write(const Report& r, std::ostream& out, const RenderOptions& opts) const override;
};

}  // namespace chokepoint::report
