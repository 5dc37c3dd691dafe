// The human report for a terminal: verdict first, then where the step time goes, the
// ranked findings with their evidence and fix, the top kernels and import warnings.
// Written to be read in ten seconds at RenderOptions.width columns.
#pragma once

#include "report/reporter.h"

namespace chokepoint::report {

class TextReporter final : public Reporter {
 public:
  Status write(const Report& r, std::ostream& out, const RenderOptions& opts) const override;
};

}  // namespace chokepoint::report
