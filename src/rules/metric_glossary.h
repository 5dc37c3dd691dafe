// The glossary entries of the evidence metrics: every `metric` a finding's evidence can
// carry (rules/**/*.cc, evidence("name", ...)), as the reports print it (the JSON's
// findings[].evidence[].metric; the text with spaces for underscores): what the number is,
// where it comes from and which findings print it, and how to read it against its
// threshold. glossary_test.cc scans the rules' sources so that none is added without.
#pragma once

#include <vector>

#include "rules/glossary.h"

namespace chokepoint::rules {

// One entry of kind "metric" per metric name, in alphabetical order.
const std::vector<GlossaryEntry>& metric_glossary();

}  // namespace chokepoint::rules
