// The control channel of `run --trace=on-demand`: the traced process listens on a unix
// socket in the recording directory, DIR/control-<pid>.sock, made 0600 before it
// listens, and answers only a peer of its own user (SO_PEERCRED); `chokepoint trace
// --pid PID` connects, sends one request line and reads one reply line. No network port,
// nothing else accepted: the client also refuses a path that is not such a socket (not a
// socket, another owner, another mode). No CUDA here: both ends are tested without a GPU.
//
// Requests: "steps N" (a window of N steps from the next step start), "duration NS" (a
// window of NS nanoseconds from now). Replies: "ok TEXT" or "error TEXT".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace chokepoint::tracer {

// "DIR/control-4242.sock".
std::string control_socket_path(const std::string& dir, int64_t pid);

struct ControlRequest {
  int64_t steps = 0;
  int64_t duration_ns = 0;
};
std::optional<ControlRequest> parse_control_request(std::string_view line);
std::string format_control_request(const ControlRequest& r);

class ControlServer {
 public:
  // Creates the socket at `path` (never over a file that is there), 0600, listening.
  static std::unique_ptr<ControlServer> listen(const std::string& path, std::string* error);
  ~ControlServer();  // closes and removes the socket
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Waits up to `timeout_ms` for a connection and answers it: one request line in, the
  // line `handle` returns out ("ok ..." / "error ..."). A peer of another user gets an
  // error and nothing is handled. False when no connection came.
  bool serve_one(int timeout_ms, const std::function<std::string(std::string_view request)>& handle);

  const std::string& path() const { return path_; }

 private:
  ControlServer(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// Checks that `path` is a control socket this user may trust: a socket, owned by the
// effective user, mode 0600. "" when it is, else why not.
std::string check_control_socket(const std::string& path);

// Sends `request` to the socket at `path`, waits up to `timeout_ms` for the reply line.
// False (and `error`) when the socket is refused, cannot be reached or does not answer.
bool control_request(const std::string& path, const std::string& request, int timeout_ms, std::string* reply,
                     std::string* error);

}  // namespace chokepoint::tracer
