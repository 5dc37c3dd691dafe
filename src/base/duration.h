// Durations as people type them on a command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace chokepoint {

// "100ms", "1.5s", "2m", "1h", "250us"; a bare number is seconds. Nanoseconds, or
// nullopt when the text is not a positive duration.
std::optional<int64_t> parse_duration_ns(const std::string& text);

}  // namespace chokepoint
