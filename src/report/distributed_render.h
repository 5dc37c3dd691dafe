// The ranks of a distributed job side by side (Report::distributed) in each format: the
// per-rank table, the straggler, the collectives by kind and size, the clock alignment.
// The reporters call these (one section each); the JSON keys are the report contract's
// "distributed" object (docs/ARCHITECTURE.md "Report contract"; added keys only).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace chokepoint::report {

// Plain text (no escape codes): a heading, the per-rank table's lines (aligned, not to be
// wrapped) and notes (to be wrapped).
struct DistributedText {
  std::string heading;
  std::vector<std::string> table;
  std::vector<std::string> notes;
};
DistributedText distributed_text(const Distributed& d);
void distributed_markdown(const Distributed& d, std::ostream& out);
nlohmann::ordered_json distributed_json(const Distributed& d, bool timings);
std::string html_distributed_section(const Report& r);

}  // namespace chokepoint::report
