// The command `chokepoint run` launches: fork + execvp, the child keeps our stdin,
// stdout, stderr and environment, in a process group of its own, so that --duration, the
// signals we forward and the final SIGKILL reach every process it starts (a shell's
// background jobs, DataLoader workers), not only the first. When chokepoint runs in the
// foreground of a terminal, that group becomes the terminal's foreground group while it
// runs (as a shell does for a job: Ctrl-C, Ctrl-\ and reads from the terminal reach the
// command directly; Ctrl-Z stops the command and then chokepoint) and the terminal is given
// back when it exits. The child gets SIGTERM if chokepoint dies first (PR_SET_PDEATHSIG).
// An exec failure ("no such command") comes back through a close-on-exec pipe as a
// Status, not as a child that exits 127.
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
  // `env`: variables set (or replaced) in the child's environment only. `output`: when
  // not empty, the files (created or truncated) that get the child's stdout and stderr
  // instead of ours (`tune` reads its trials' prints from them).
  struct Output {
    std::string stdout_path, stderr_path;
  };
  static Result<Child> spawn(const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& env = {},
                             const Output& output = {});

  pid_t pid() const { return pid_; }
  // Reaps the child if it has exited (never blocks): its exit code, 128 + signal
  // number when a signal killed it (the shell's convention).
  std::optional<int> poll();
  // Blocks until the child exits.
  int wait();
  bool exited() const { return exit_code_.has_value(); }
  // `sig` to every process of the command's group (its children too), also after the
  // first process exited while others of the group live on.
  void signal(int sig) const;
  // `sig` to the command's first process alone, while it runs (the signals a user sends a
  // job's main process, SIGUSR1 say, which would kill its DataLoader workers).
  void signal_first(int sig) const;
  // True while a process of the command's group is alive.
  bool group_alive() const;
  // Gives the terminal back to chokepoint's group when the child took it (idempotent;
  // poll() and wait() do it once the child has exited).
  void restore_terminal();

 private:
  Child(pid_t pid, int tty) : pid_(pid), tty_(tty) {}
  // The child stopped (Ctrl-Z): stop chokepoint too, as the shell expects of its job;
  // when continued, hand the terminal back to the child and continue it.
  void follow_stop();
  pid_t pid_ = -1;
  int tty_ = -1;  // the terminal the child's group holds (one of fds 0-2), -1: none
  std::optional<int> exit_code_;
};

// The terminal (fd 0, 1 or 2) whose foreground process group is ours, -1 when none: the
// one a launched command's group takes over.
int foreground_terminal_fd();

// The exit code a shell reports for a wait(2) status.
int exit_code_from_wait_status(int status);

}  // namespace chokepoint::live
