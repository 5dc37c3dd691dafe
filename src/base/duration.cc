#include "base/duration.h"

#include <exception>

namespace chokepoint {

std::optional<int64_t> parse_duration_ns(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  if (scale == 0 || !(v > 0) || v * scale > 9e18) return std::nullopt;
  return static_cast<int64_t>(v * scale);
}

}  // namespace chokepoint
