// Small text helpers shared by the readers of /proc, /sys, tool output and files.
#pragma once

#include <string_view>

namespace chokepoint {

// `s` without its leading and trailing ASCII white space (space, \t, \n, \v, \f, \r).
inline std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

}  // namespace chokepoint
