// Exit statuses of the commands, chosen from a Status's error code (never from the words
// of its message). README "Exit status" and each command's --help document them.
#pragma once

#include "base/status.h"

namespace chokepoint::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;     // analyze, watch, doctor, bench: the work could not be done
inline constexpr int kExitUsage = 2;      // every command: wrong arguments
inline constexpr int kExitGate = 3;       // analyze --fail-on: a finding at or above the bar; diff --fail-if-slower
inline constexpr int kExitInternal = 70;  // chokepoint's own bug (EX_SOFTWARE)
// run, a wrapper like env, timeout and docker run: chokepoint failed before the command
// started, or the command could not be started.
inline constexpr int kExitWrapperFailed = 125;
inline constexpr int kExitCannotRun = 127;

enum class ExitConvention {
  kTool,     // analyze, watch, doctor, bench, explain: 0, 1, 2
  kWrapper,  // run: the command's own status, else 125 / 127, 2
};

// The exit status of a command that ends with `code` (kOk: 0).
int exit_status(ErrorCode code, ExitConvention convention = ExitConvention::kTool);
inline int exit_status(const Status& s, ExitConvention convention = ExitConvention::kTool) {
  return exit_status(s.code(), convention);
}

}  // namespace chokepoint::cli
