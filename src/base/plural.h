// A count with its noun in the right number: "1 chain per step", "3 chains per step".
#pragma once

#include <cmath>
#include <string>
#include <string_view>

namespace chokepoint {

// n as a report shows it (rounded to a whole number, like "{:.0f}"), then `singular` when
// that reads 1 and `plural` otherwise.
inline std::string counted(double n, std::string_view singular, std::string_view plural) {
  const long long shown = std::llround(n);
  std::string s = std::to_string(shown);
  s += ' ';
  s += shown == 1 ? singular : plural;
  return s;
}

}  // namespace chokepoint
