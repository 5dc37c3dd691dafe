#include "live/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chokepoint::live {
namespace {

// tcsetpgrp from a background group raises SIGTTOU unless it is blocked.
void set_foreground(int tty, pid_t pgid) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  (void)tcsetpgrp(tty, pgid);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// The files a child's stdout and stderr go to, opened before the fork so that a failure
// is a Status in the parent; closed there once the child has its copies.
struct OutputFiles {
  int fd[2] = {-1, -1};
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
  Status open(const Child::Output& output) {
    const std::string* paths[2] = {&output.stdout_path, &output.stderr_path};
    for (int i = 0; i < 2; ++i) {
      if (paths[i]->empty()) continue;
      // O_NOFOLLOW: never through a link planted where the output goes.
      fd[i] = ::open(paths[i]->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd[i] < 0) return Status::Error("cannot create " + *paths[i] + ": " + std::strerror(errno));
    }
    return Status::Ok();
  }
  // In the child: stdout and stderr to the files opened.
  void redirect() const {
    if (fd[0] >= 0) dup2(fd[0], STDOUT_FILENO);
    if (fd[1] >= 0) dup2(fd[1], STDERR_FILENO);
  }
};

}  // namespace

int exit_code_from_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int foreground_terminal_fd() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (isatty(fd) && tcgetpgrp(fd) == getpgrp()) return fd;
  }
  return -1;
}

Result<Child> Child::spawn(const std::vector<std::string>& argv,
                           const std::vector<std::pair<std::string, std::string>>& env, const Output& output) {
  if (argv.empty()) return Status::Error(ErrorCode::kUsage, "no command to run (give it after --)");
  OutputFiles files;
  if (Status st = files.open(output); !st.ok()) return st;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const int tty = foreground_terminal_fd();
  const pid_t parent = getpid();
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
    // The child: its own process group (both sides set it, so that neither the terminal
    // hand-over nor a signal to the group can come before it exists), the terminal's
    // foreground when we had it, and SIGTERM when chokepoint dies.
    setpgid(0, 0);
    if (tty >= 0) set_foreground(tty, getpid());
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);  // chokepoint died before prctl
    // Signal dispositions back to defaults (we may have installed handlers before
    // forking; exec resets handled ones, but not ignored ones).
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU}) {
      sigaction(sig, &sa, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    close(fds[0]);
    files.redirect();
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execvp(args[0], args.data());
    const int err = errno;
    ssize_t ignored = write(fds[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);  // EACCES once the child has exec'd: it has set it itself by then
  if (tty >= 0) set_foreground(tty, pid);
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
    if (tty >= 0) set_foreground(tty, getpgrp());
    return Status::Error(ErrorCode::kCannotRun, "cannot run '" + argv[0] + "': " + std::strerror(err));
  }
  return Child(pid, tty);
}

void Child::follow_stop() {
  if (tty_ >= 0) set_foreground(tty_, getpgrp());
  kill(getpid(), SIGSTOP);  // returns once the shell continues us (fg or bg)
  if (tty_ >= 0 && tcgetpgrp(tty_) == getpgrp()) set_foreground(tty_, pid_);  // fg: the command's again
  kill(-pid_, SIGCONT);
}

std::optional<int> Child::poll() {
  if (exit_code_) return exit_code_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG | WUNTRACED);
  if (r == pid_ && WIFSTOPPED(status)) {
    follow_stop();
  } else if (r == pid_) {
    exit_code_ = exit_code_from_wait_status(status);
    restore_terminal();
  }
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
  restore_terminal();
  return *exit_code_;
}

void Child::signal(int sig) const {
  if (pid_ > 0) kill(-pid_, sig);
}

void Child::signal_first(int sig) const {
  if (pid_ > 0 && !exit_code_) kill(pid_, sig);
}

bool Child::group_alive() const { return pid_ > 0 && kill(-pid_, 0) == 0; }

void Child::restore_terminal() {
  if (tty_ < 0) return;
  if (tcgetpgrp(tty_) == pid_) set_foreground(tty_, getpgrp());
  tty_ = -1;
}

}  // namespace chokepoint::live
