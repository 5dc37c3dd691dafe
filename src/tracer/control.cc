#include "tracer/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace chokepoint::tracer {
namespace {

constexpr size_t kMaxLine = 256;

std::string errno_text() { return std::strerror(errno); }

// A sockaddr for `path`; a path longer than sun_path is reached through its directory's
// descriptor (/proc/self/fd/N/NAME), which `dir_fd` then holds (closed by the caller).
bool address_of(const std::string& path, sockaddr_un* addr, int* dir_fd, std::string* error) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  std::string p = path;
  if (p.size() >= sizeof addr->sun_path) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    *dir_fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dir_fd < 0) {
      *error = "cannot open " + dir + ": " + errno_text();
      return false;
    }
    p = "/proc/self/fd/";  // appended in steps: GCC 12 warns falsely on "literal" + std::string
    p += std::to_string(*dir_fd);
    p += '/';
    p += path.substr(slash + 1);
  }
  if (p.size() >= sizeof addr->sun_path) {
    *error = "socket path too long: " + path;
    return false;
  }
  std::memcpy(addr->sun_path, p.data(), p.size());
  return true;
}

bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

// One line (without its newline) from `fd` within `timeout_ms`; nullopt when none.
std::optional<std::string> read_line(int fd, int timeout_ms) {
  std::string line;
  char c = 0;
  while (line.size() < kMaxLine && wait_for(fd, POLLIN, timeout_ms)) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (c == '\n') return line;
    line.push_back(c);
  }
  return line.empty() ? std::nullopt : std::optional<std::string>(line);
}

void write_line(int fd, std::string line) {
  line.push_back('\n');
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

bool peer_is_us(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == ::geteuid();
}

bool positive(std::string_view s, int64_t* out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && p == end && *out > 0;
}

}  // namespace

std::string control_socket_path(const std::string& dir, int64_t pid) {
  return dir + "/control-" + std::to_string(pid) + ".sock";
}

std::optional<ControlRequest> parse_control_request(std::string_view line) {
  ControlRequest r;
  if (line.starts_with("steps ") && positive(line.substr(6), &r.steps)) return r;
  if (line.starts_with("duration ") && positive(line.substr(9), &r.duration_ns)) return r;
  return std::nullopt;
}

std::string format_control_request(const ControlRequest& r) {
  return r.steps > 0 ? "steps " + std::to_string(r.steps) : "duration " + std::to_string(r.duration_ns);
}

std::unique_ptr<ControlServer> ControlServer::listen(const std::string& path, std::string* error) {
  sockaddr_un addr{};
  int dir_fd = -1;
  std::string why;
  const bool addressed = address_of(path, &addr, &dir_fd, &why);
  const int fd = addressed ? ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
  if (addressed && fd < 0) why = "socket: " + errno_text();
  // bind() never replaces a file; nobody can connect before listen(), after the chmod.
  bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  if (fd >= 0 && !ok) why = "cannot create " + path + ": " + errno_text();
  if (ok && (::chmod(addr.sun_path, 0600) != 0 || ::listen(fd, 4) != 0)) {
    why = "cannot listen on " + path + ": " + errno_text();
    ::unlink(addr.sun_path);
    ok = false;
  }
  if (dir_fd >= 0) ::close(dir_fd);
  if (!ok) {
    if (fd >= 0) ::close(fd);
    if (error != nullptr) *error = why;
    return nullptr;
  }
  return std::unique_ptr<ControlServer>(new ControlServer(path, fd));
}

ControlServer::~ControlServer() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
}

bool ControlServer::serve_one(int timeout_ms, const std::function<std::string(std::string_view)>& handle) {
  if (!wait_for(fd_, POLLIN, timeout_ms)) return false;
  const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) return false;
  if (!peer_is_us(c)) {
    write_line(c, "error refused: not this job's user");
  } else if (auto line = read_line(c, 1000)) {
    write_line(c, handle(*line));
  }
  ::close(c);
  return true;
}

std::string check_control_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "no control socket " + path + ": " + errno_text();
  if (!S_ISSOCK(st.st_mode)) return "refusing " + path + ": not a socket";
  if (st.st_uid != ::geteuid()) return "refusing " + path + ": owned by another user";
  if ((st.st_mode & 07777) != 0600) return "refusing " + path + ": its mode is not 0600";
  return "";
}

bool control_request(const std::string& path, const std::string& request, int timeout_ms, std::string* reply,
                     std::string* error) {
  if (std::string why = check_control_socket(path); !why.empty()) {
    *error = why;
    return false;
  }
  sockaddr_un addr{};
  int dir_fd = -1;
  if (!address_of(path, &addr, &dir_fd, error)) return false;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  if (!ok) *error = "cannot reach " + path + ": " + errno_text();
  if (dir_fd >= 0) ::close(dir_fd);
  if (ok) {
    write_line(fd, request);
    auto line = read_line(fd, timeout_ms);
    ok = line.has_value();
    if (ok) *reply = *line;
    if (!ok) *error = "no answer from " + path;
  }
  if (fd >= 0) ::close(fd);
  return ok;
}

}  // namespace chokepoint::tracer
