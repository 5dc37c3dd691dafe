// The catalogue of import and analysis stats (base/stat_catalogue.h) as text, for
// `chokepoint analyze --list-stats`: one line per stat, its name, severity, reader and
// description.
#pragma once

#include <string>

namespace chokepoint::report {

std::string format_stat_catalogue();

}  // namespace chokepoint::report
