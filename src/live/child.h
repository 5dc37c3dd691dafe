// The command `chokepoint run` launches: fork + execvp, the child keeps our stdin,
// stdout, stderr, environment and process group (so a terminal's Ctrl-C reaches it
// directly, as it would without chokepoint). An exec failure ("no such command") comes
// back through a close-on-exec pipe as a Status, not as a child that exits 127.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace chokepoint::live {

class Child {
 public:
  // `env`: variables set (or replaced) in the child's environment only.
  static Result<Child> spawn(const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& env = {});

  pid_t pid() const { return pid_; }
  // Reaps the child if it has exited (never blocks): its exit code, 128 + signal
  // number when a signal killed it (the shell's convention).
  std::optional<int> poll();
  // Blocks until the child exits.
  int wait();
  bool exited() const { return exit_code_.has_value(); }
  void signal(int sig) const;

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// The exit code a shell reports for a wait(2) status.
int exit_code_from_wait_status(int status);

}  // namespace chokepoint::live
