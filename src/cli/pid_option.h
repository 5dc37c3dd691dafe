// The validator of a --pid option (run, watch, trace): a positive decimal integer that
// fits pid_t; whether such a process exists is said later, in words. CLI::PositiveNumber
// would answer "abc" or 0 with the range of a double, 300 digits long.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <string>

#include "base/terminal_text.h"

namespace chokepoint::cli {

inline CLI::Validator pid_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int32_t pid = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, pid);
        if (text.empty() || ec != std::errc() || p != end || pid <= 0) {
          return "'" + escape_controls(text) + "' is not a valid process id (a positive integer)";
        }
        return "";
      },
      "PID");
}

}  // namespace chokepoint::cli
