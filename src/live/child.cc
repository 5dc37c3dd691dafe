#include "live/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chokepoint::live {

int exit_code_from_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

Result<Child> Child::spawn(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return Status::Error("no command to run (give it after --)");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return Status::Error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // The child: signal dispositions back to defaults (we may have installed handlers
    // before forking; exec resets handled ones, but not ignored ones).
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGWINCH}) sigaction(sig, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    close(fds[0]);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execvp(args[0], args.data());
    const int err = errno;
    ssize_t ignored = write(fds[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(fds[1]);
  int err = 0;
  ssize_t n;
  do {
    n = read(fds[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return Status::Error("cannot run '" + argv[0] + "': " + std::strerror(err));
  }
  return Child(pid);
}

std::optional<int> Child::poll() {
  if (exit_code_) return exit_code_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_code_ = exit_code_from_wait_status(status);
  return exit_code_;
}

int Child::wait() {
  while (!exit_code_) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, 0);
    if (r == pid_) {
      exit_code_ = exit_code_from_wait_status(status);
    } else if (r < 0 && errno != EINTR) {
      exit_code_ = 1;  // not our child any more (ECHILD): nothing to wait for
    }
  }
  return *exit_code_;
}

void Child::signal(int sig) const {
  if (!exit_code_ && pid_ > 0) kill(pid_, sig);
}

}  // namespace chokepoint::live
