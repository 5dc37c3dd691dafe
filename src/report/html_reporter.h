// The report as one self-contained HTML page (`--format html`): the verdict and the first
// remedy on top, then where the step goes, the roofline, the tables, live samples and
// import warnings. Inline style and SVG, a few lines of inline script, nothing fetched:
// it opens from a file, in any browser, offline; light and dark; printable.
#pragma once

#include "report/reporter.h"

namespace chokepoint::report {

class HtmlReporter final : public Reporter {
 public:
  Status write(const Report& r, std::ostream& out, const RenderOptions& opts) const override;
};

}  // namespace chokepoint::report
