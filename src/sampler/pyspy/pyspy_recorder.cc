#include "sampler/pyspy/pyspy_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/text.h"
#include "samples/stacks.h"

namespace chokepoint::sampler {

namespace {

bool executable(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// At most the first `max_bytes` of `path`; the buffer grows with what is read, so a cap
// far above the file's size costs nothing (a 542-byte result once took a 2 GiB buffer).
std::string read_text(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string s;
  if (!in) return s;
  char buf[1 << 16];
  while (s.size() < max_bytes) {
    in.read(buf, static_cast<std::streamsize>(std::min(sizeof buf, max_bytes - s.size())));
    const auto n = static_cast<size_t>(in.gcount());
    s.append(buf, n);
    if (!in || n == 0) break;
  }
  return s;
}

}  // namespace

std::string find_pyspy(const std::string& explicit_path, std::string* why) {
  if (!explicit_path.empty()) {
    if (executable(explicit_path)) return explicit_path;
    if (why) *why = "--py-spy " + explicit_path + " is not an executable file";
    return "";
  }
  if (const char* env = std::getenv("CHOKEPOINT_PY_SPY"); env != nullptr && *env != '\0') {
    if (executable(env)) return env;
    if (why) *why = std::string("$CHOKEPOINT_PY_SPY (") + env + ") is not an executable file";
    return "";
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (dir.empty()) continue;
      const std::string p = dir + "/py-spy";
      if (executable(p)) return p;
    }
  }
  if (why) *why = "py-spy not found on PATH (pip install py-spy, or --py-spy PATH)";
  return "";
}

std::string pyspy_version(const std::string& binary) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "";
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return "";
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDERR_FILENO);
    }
    ::execl(binary.c_str(), binary.c_str(), "--version", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[256];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > 4096) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out = trim(out.substr(0, out.find('\n')));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "";
}

Result<std::unique_ptr<PySpyRecorder>> PySpyRecorder::start(const PySpyOptions& o, int64_t target, int64_t now_ns) {
  std::unique_ptr<PySpyRecorder> r(new PySpyRecorder());
  r->o_ = o;
  r->target_ = target;
  const std::string rate = std::to_string(static_cast<int>(o.rate_hz > 0 ? o.rate_hz : 20));
  const std::string pid = std::to_string(target);
  std::vector<std::string> args = {o.binary,        "record",   "--pid",   pid,      "--format",
                                   "chrometrace",   "--rate",   rate,      "--idle", "--threads",
                                   "--nonblocking", "--output", o.out_file};
  if (o.subprocesses) args.insert(args.end() - 2, "--subprocesses");
  if (o.duration_s > 0) args.insert(args.end() - 2, {"--duration", std::to_string(o.duration_s)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The log: created here (not by the child) so a failure to create it is ours to report.
  const int log = ::open(o.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (log < 0) return Status::Error("cannot create " + o.log_file + ": " + std::strerror(errno));
  r->origin_ns_ = now_ns;
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::close(log);
    return Status::Error(std::string("cannot start py-spy: ") + std::strerror(e));
  }
  if (child == 0) {
    // Its own process group: a terminal's Ctrl-C goes to the job, and py-spy keeps
    // recording until the job has exited. If chokepoint dies, py-spy is told to write
    // what it has and stop.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGINT);
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log);
  r->pid_ = child;
  return r;
}

PySpyRecorder::~PySpyRecorder() {
  if (pid_ > 0 && !exit_code_) stop(2'000'000'000);
}

std::optional<int> PySpyRecorder::poll() {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  int status = 0;
  struct rusage ru {};
  const pid_t r = ::wait4(pid_, &status, WNOHANG, &ru);
  if (r == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    cpu_s_ = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  }
  return exit_code_;
}

std::optional<int> PySpyRecorder::stop(int64_t timeout_ns) {
  if (poll()) return exit_code_;
  ::kill(pid_, SIGINT);
  const int64_t step = 10'000'000;
  for (int64_t waited = 0; waited < timeout_ns; waited += step) {
    if (poll()) return exit_code_;
    struct timespec ts {
      0, step
    };
    ::nanosleep(&ts, nullptr);
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid_, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  cpu_s_ = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  exit_code_ = 128 + SIGKILL;
  return std::nullopt;
}

std::string PySpyRecorder::error() const {
  const std::string log = read_text(o_.log_file, 64 * 1024);
  std::stringstream ss(log);
  std::string line, last;
  while (std::getline(ss, line)) {
    if (line.rfind("Error:", 0) == 0 || line.find("error:") != std::string::npos) last = trim(line);
  }
  return last;
}

bool PySpyRecorder::permission_denied() const {
  const std::string log = read_text(o_.log_file, 64 * 1024);
  for (const char* s : {"Permission denied", "Operation not permitted", "ptrace", "CAP_SYS_PTRACE"}) {
    if (log.find(s) != std::string::npos) return true;
  }
  return false;
}

namespace {

// The file name of a JSON string starting at text[i] (just past its opening quote) into
// `file`; returns the position of its closing quote, or npos for a name with an escape
// other than \" \\ \/ (a name we would not open anyway) or one cut off.
size_t read_file_name(const std::string& text, size_t i, std::string& file) {
  for (; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] != '\\') {
      file += text[i];
      continue;
    }
    if (i + 1 >= text.size()) return std::string::npos;
    const char c = text[++i];
    if (c != '"' && c != '\\' && c != '/') return std::string::npos;
    file += c;
  }
  return i;
}

// Every `"filename":"F","line":N` pair: the job's own files' lines (at most `max_lines`
// per file, unsorted).
std::map<std::string, std::vector<int>> wanted_lines(const std::string& text, size_t max_lines) {
  std::map<std::string, std::vector<int>> wanted;
  const std::string key = "\"filename\":\"";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    std::string file;
    const size_t i = read_file_name(text, at + key.size(), file);
    if (i == std::string::npos || file.empty() || samples::is_library_file(file)) continue;
    const std::string lk = "\",\"line\":";
    if (text.compare(i, lk.size(), lk) != 0) continue;
    const int line = std::atoi(text.c_str() + i + lk.size());
    if (line <= 0) continue;
    auto& v = wanted[file];
    if (v.size() < max_lines) v.push_back(line);
  }
  return wanted;
}

// Adds lines `lines` (sorted) of `file` (relative to `cwd`) to `out` as "file:N"; false
// once `out` holds `max_lines`.
bool add_source_lines(const std::string& file, const std::vector<int>& lines, const std::string& cwd, size_t max_lines,
                      std::map<std::string, std::string>& out) {
  const std::string path = !file.empty() && file[0] == '/' ? file : cwd + "/" + file;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) return true;
  std::ifstream in(path);
  std::string l;
  int n = 0;
  size_t k = 0;
  while (k < lines.size() && std::getline(in, l)) {
    ++n;
    if (n == lines[k]) {
      if (out.size() >= max_lines) return false;
      out[file + ":" + std::to_string(n)] = trim(l).substr(0, 200);
      ++k;
    }
  }
  return true;
}

}  // namespace

std::map<std::string, std::string> source_lines_of(const std::string& chrometrace_file, const std::string& cwd,
                                                   size_t max_lines) {
  std::map<std::string, std::string> out;
  // The first GiB holds the job's lines many times over; a longer recording's tail adds none.
  const std::string text = read_text(chrometrace_file, size_t{1} << 30);
  for (auto& [file, lines] : wanted_lines(text, max_lines)) {
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    if (!add_source_lines(file, lines, cwd, max_lines, out)) return out;
  }
  return out;
}

}  // namespace chokepoint::sampler
