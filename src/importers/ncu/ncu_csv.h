// Reads Nsight Compute's CSV export of the raw page: `ncu --csv --page raw [--metrics ...]
// CMD` and `ncu --import REPORT.ncu-rep --csv --page raw` (docs/FORMATS.md "Nsight
// Compute CSV"). One row per profiled launch after a header row and, by default, a units
// row; numbers carry thousands separators ("1,229,536") and are scaled by their unit
// ("ms", "Gbyte", "Kbyte/block") to base units. Lines that are not CSV records (ncu's
// ==PROF== / ==WARNING== / ==ERROR== lines, the profiled program's own output) are
// skipped; ==ERROR== and ==WARNING== lines are kept as messages. A metric the file lacks
// stays unknown.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "timeline/kernel_metrics.h"

namespace chokepoint::importers {

// Parses the text of an export. Fails when it holds no header of the raw page (the
// details page, or no CSV at all: the message says which), or no profiled launch.
Result<timeline::KernelMetricsFile> parse_ncu_csv(std::string_view text);

// Reads a file (plain or gzip) and parses it.
Result<timeline::KernelMetricsFile> read_ncu_csv(const std::string& path);

// True when `head` (the first bytes of a file) looks like an ncu CSV export: a record
// starting "ID","Process ID", possibly after ==PROF== lines and the program's output.
bool looks_like_ncu_csv(std::string_view head);

// Scales `value` in `unit` to base units (ns, bytes, counts, percent); false for a unit
// whose scale is not known (the value is then left as it is).
bool to_base_unit(std::string_view unit, double* value);

// A number as ncu writes it: "1,229,536", "93.44", "1.5e+03"; false for "", "n/a", "nan".
bool parse_ncu_number(std::string_view text, double* value);

}  // namespace chokepoint::importers
