// The HTTP/1.1 server of `chokepoint serve`: one event-loop thread over non-blocking
// sockets (poll), made for an exporter that answers small GETs to anyone who can reach
// the port, hostile clients included. Everything a client can make it hold is capped:
//   - the request head (8 KiB, 64 header lines: 431, or 414 for a request line over the
//     cap); a request with a body is answered 413 and the body never read; a malformed
//     head 400 (505 for another HTTP version); each of these closes the connection;
//   - time: a request head must be complete 10 s after its first byte (a deadline, not a
//     per-read timeout, so trickling bytes does not extend it), an idle keep-alive
//     connection is closed after 30 s, a response not taken by the client in 10 s is
//     dropped;
//   - connections: at most 64; when full, a new one closes the longest-idle connection
//     (then the oldest slow request head, then one lingering after an error), so that a
//     fresh scrape is served while idle or slowloris clients hold every slot.
// Memory per connection is its capped input (2 heads) and the responses being written.
// Keep-alive and pipelining: every complete request in the buffer is answered in order;
// HTTP/1.0 and Connection: close end the connection after the answer. A connection
// closed after an error first stops writing and discards what the client still sends
// for a short while (a lingering close), so the client reads the error instead of a reset.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "serve/http_message.h"

namespace chokepoint::serve {

struct HttpServerOptions {
  HeadLimits head;
  size_t max_connections = 64;
  std::chrono::milliseconds head_timeout{10'000};   // from a request's first byte to its empty line
  std::chrono::milliseconds idle_timeout{30'000};   // a connection with no request under way
  std::chrono::milliseconds write_timeout{10'000};  // from a response's first byte queued to its last sent
  std::chrono::milliseconds linger_timeout{2'000};  // discarding input after an error, before the close
};

struct HttpRequest {
  std::string method;  // "GET", "HEAD", or any other token (the handler answers 405)
  std::string path;    // without the query
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;  // for HEAD: its length is sent, the bytes are not
  std::vector<std::pair<std::string, std::string>> headers;
  // Called on the loop thread when the connection ends before the whole response was
  // written (the client went away or did not read it in time).
  std::function<void()> on_cut_off;
};

// Called on the loop thread for every well-formed request without a body.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  // Binds and listens on host:port (port 0: a free one; SO_REUSEADDR, so a restart right
  // after a stop binds). Fails with the reason (the address in use, not local, ...).
  static Result<std::unique_ptr<HttpServer>> listen(const std::string& host, int port, HttpServerOptions options,
                                                    HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Serves on the calling thread until stop(); an error only when the loop itself cannot
  // go on (poll failing). Client errors never end it.
  Status run();
  // From any thread, before or during run(): run() returns soon after.
  void stop();

 private:
  struct Loop;
  explicit HttpServer(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
};

}  // namespace chokepoint::serve
