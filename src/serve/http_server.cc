#include "serve/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>

namespace chokepoint::serve {
namespace {

using Clock = std::chrono::steady_clock;

// Pipelined requests are answered while less than this is waiting to be sent; the rest
// wait in the (capped) input buffer, so a client that sends many requests and reads
// slowly holds at most this much plus one response.
constexpr size_t kOutHighWater = 64 * 1024;
constexpr size_t kMaxQueuedResponses = 64;
// An output buffer larger than this is freed once sent (a page can be hundreds of KB;
// 64 connections keeping that capacity would hold it for nothing).
constexpr size_t kKeepOutCapacity = 64 * 1024;
constexpr size_t kSendChunk = 256 * 1024;
constexpr size_t kDiscardChunk = 16 * 1024;
constexpr int kDiscardReadsPerTurn = 4;
constexpr int kAcceptsPerTurn = 64;
// After accept fails for want of descriptors or memory, the listening socket stays
// readable: without a pause the loop would spin on it.
constexpr std::chrono::milliseconds kAcceptPause{100};
// The longest poll() sleeps with nothing due: a bound, not a timer anything waits on.
constexpr int kMaxPollMs = 1000;

struct Pending {
  size_t end = 0;  // offset in Connection::out just past this response
  std::function<void()> on_cut_off;
};

struct Connection {
  int fd = -1;
  std::string in;  // received, not yet answered; at most 2 heads' cap
  std::string out;
  size_t out_off = 0;           // out[0, out_off) is sent
  std::deque<Pending> pending;  // responses in `out` not yet fully sent, in order
  bool close_after_write = false;
  bool peer_closed = false;  // the client sent FIN: answer what is complete, then close
  bool lingering = false;    // output shut after an error; input discarded until linger_until
  bool closed = false;
  std::optional<Clock::time_point> head_started;  // the first byte of the request in `in`
  Clock::time_point idle_since, write_started, linger_until;

  bool writing() const { return out_off < out.size(); }
  bool idle() const { return !lingering && !writing() && in.empty() && !close_after_write; }
};

std::string errno_text(int err) { return std::strerror(err); }

// The listening socket: the first address of `host` that binds.
Result<int> open_listener(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  if (const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &res); rc != 0) {
    return Status::Error(ErrorCode::kUsage, "cannot listen on " + host + ": " + gai_strerror(rc));
  }
  int err = 0;
  int fd = -1;
  for (const addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      if (err == 0) err = errno;
      continue;
    }
    // A restart must bind while the last run's closed connections sit in TIME_WAIT.
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      if (err == 0) err = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd >= 0) return fd;
  std::string msg = "cannot listen on " + host + ":" + port_text + ": " + errno_text(err);
  if (err == EADDRINUSE) {
    msg += " (another program, perhaps another chokepoint serve, holds the port; pick one with --listen)";
  }
  return Status::Error(ErrorCode::kFailed, msg);
}

int bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return -1;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
}

}  // namespace

struct HttpServer::Loop {
  HttpServerOptions options;
  HttpHandler handler;
  int listen_fd = -1;
  int stop_fd = -1;
  int port = 0;
  std::vector<std::unique_ptr<Connection>> conns;
  Clock::time_point accept_paused_until{};

  ~Loop() {
    for (auto& c : conns) close_connection(*c);
    if (listen_fd >= 0) close(listen_fd);
    if (stop_fd >= 0) close(stop_fd);
  }

  Status run();
  int poll_timeout_ms(Clock::time_point now) const;
  Clock::time_point deadline(const Connection& c) const;
  void expire(Clock::time_point now);
  void sweep();
  void accept_ready(Clock::time_point now);
  bool make_room(Clock::time_point now);
  Connection* pick_victim();
  static bool request_waiting(const Connection& c);
  void on_events(Connection& c, short revents, Clock::time_point now);
  void read_input(Connection& c, Clock::time_point now);
  void discard_input(Connection& c);
  void pump(Connection& c, Clock::time_point now);
  bool produce(Connection& c, Clock::time_point now);
  void answer(Connection& c, const RequestHead& head, Clock::time_point now);
  void refuse(Connection& c, int status, const std::string& why, Clock::time_point now);
  void queue(Connection& c, const ResponseHead& head, const std::string& body, std::function<void()> on_cut_off,
             Clock::time_point now);
  bool flush(Connection& c, Clock::time_point now);
  static void close_connection(Connection& c);
};

Clock::time_point HttpServer::Loop::deadline(const Connection& c) const {
  if (c.lingering) return c.linger_until;
  if (c.writing()) return c.write_started + options.write_timeout;
  if (c.head_started) return *c.head_started + options.head_timeout;
  return c.idle_since + options.idle_timeout;
}

int HttpServer::Loop::poll_timeout_ms(Clock::time_point now) const {
  Clock::time_point next = now + std::chrono::milliseconds(kMaxPollMs);
  for (const auto& c : conns) next = std::min(next, deadline(*c));
  if (accept_paused_until > now) next = std::min(next, accept_paused_until);
  if (next <= now) return 0;
  // Rounded up, so the loop wakes at or after the deadline, not 1 ms before it.
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
}

void HttpServer::Loop::close_connection(Connection& c) {
  if (c.closed) return;
  c.closed = true;
  for (Pending& p : c.pending) {
    if (p.on_cut_off) p.on_cut_off();
  }
  c.pending.clear();
  close(c.fd);
}

void HttpServer::Loop::expire(Clock::time_point now) {
  for (auto& c : conns) {
    if (!c->closed && now >= deadline(*c)) close_connection(*c);
  }
}

void HttpServer::Loop::sweep() {
  conns.erase(std::remove_if(conns.begin(), conns.end(), [](const auto& c) { return c->closed; }), conns.end());
}

// Frees a slot for a new connection: the longest-idle one, else the oldest unfinished
// request head (a slowloris), else one lingering after an error. A connection being
// answered is never taken, nor one whose request is already waiting in its socket (a
// scraper connects and sends at once; a burst of accepts could otherwise evict it before
// its bytes were read). False when every slot is being answered.
bool HttpServer::Loop::make_room(Clock::time_point now) {
  for (;;) {
    Connection* victim = pick_victim();
    if (victim == nullptr) return false;
    if (victim->idle() && request_waiting(*victim)) {
      read_input(*victim, now);   // no longer idle: answered, or a head in progress
      if (victim->closed) break;  // it failed while being read: its slot is free
      if (!victim->idle()) continue;
    }
    close_connection(*victim);
    break;
  }
  sweep();
  return true;
}

Connection* HttpServer::Loop::pick_victim() {
  Connection* victim = nullptr;
  int victim_rank = 3;
  Clock::time_point victim_since{};
  for (auto& c : conns) {
    if (c->closed || c->writing()) continue;
    int rank = 2;
    Clock::time_point since = c->linger_until;
    if (c->idle()) {
      rank = 0;
      since = c->idle_since;
    } else if (!c->lingering && c->head_started) {
      rank = 1;
      since = *c->head_started;
    } else if (!c->lingering) {
      continue;
    }
    if (rank < victim_rank || (rank == victim_rank && since < victim_since)) {
      victim = c.get();
      victim_rank = rank;
      victim_since = since;
    }
  }
  return victim;
}

// Bytes are waiting in the socket (not an end of input: a closed peer may be evicted).
bool HttpServer::Loop::request_waiting(const Connection& c) {
  char b = 0;
  return recv(c.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

void HttpServer::Loop::accept_ready(Clock::time_point now) {
  for (int i = 0; i < kAcceptsPerTurn; ++i) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until = now + kAcceptPause;  // EMFILE, ENOBUFS, ...
      return;
    }
    if (conns.size() >= options.max_connections) sweep();
    if (conns.size() >= options.max_connections && !make_room(now)) {
      close(fd);  // every slot is sending a response: this one waits for none
      continue;
    }
    const int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    // Its own time, not the batch's: the connections accepted in one burst are evicted
    // oldest first too.
    c->idle_since = Clock::now();
    conns.push_back(std::move(c));
    // A scraper sends its request right after connecting, so it is usually here already:
    // read now, before later accepts of the same burst look for an idle one to evict.
    read_input(*conns.back(), now);
  }
}

void HttpServer::Loop::on_events(Connection& c, short revents, Clock::time_point now) {
  if ((revents & (POLLERR | POLLNVAL)) != 0) {
    close_connection(c);
    return;
  }
  if ((revents & POLLIN) != 0 || ((revents & POLLHUP) != 0 && !c.peer_closed)) {
    read_input(c, now);
  } else if ((revents & POLLHUP) != 0 && !c.writing()) {
    close_connection(c);  // both directions gone and nothing to send: poll would report it forever
    return;
  }
  // POLLHUP while writing: the send fails and closes it.
  if (!c.closed && (revents & (POLLOUT | POLLHUP)) != 0) pump(c, now);
}

void HttpServer::Loop::discard_input(Connection& c) {
  char scratch[kDiscardChunk];
  for (int i = 0; i < kDiscardReadsPerTurn; ++i) {
    const ssize_t n = recv(c.fd, scratch, sizeof scratch, 0);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    close_connection(c);  // the client closed (or reset): the lingering is over
    return;
  }
}

void HttpServer::Loop::read_input(Connection& c, Clock::time_point now) {
  if (c.lingering) {
    discard_input(c);
    return;
  }
  const size_t cap = 2 * options.head.max_head_bytes;
  if (c.in.size() < cap && !c.peer_closed && !c.close_after_write) {
    const size_t old = c.in.size();
    c.in.resize(cap);
    const ssize_t n = recv(c.fd, c.in.data() + old, cap - old, 0);
    c.in.resize(old + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n > 0 && old == 0) c.head_started = now;
    if (n == 0) c.peer_closed = true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      close_connection(c);
      return;
    }
  }
  pump(c, now);
}

// Answers what is complete in the input and sends what the socket takes, until either
// the socket is full or no complete request is left; then decides what the connection
// waits for.
void HttpServer::Loop::pump(Connection& c, Clock::time_point now) {
  if (c.lingering) return;  // its answer is sent; only its deadline or the client's close ends it
  produce(c, now);
  if (!flush(c, now)) return;
  // Once the output is empty nothing holds production back: an empty produce() means no
  // complete request is left.
  while (!c.writing() && !c.close_after_write && produce(c, now)) {
    if (!flush(c, now)) return;
  }
  if (c.writing()) return;
  if (c.close_after_write) {
    // Shut the output, then read and drop what the client still sends for a while:
    // closing with unread input would reset the connection and could destroy the
    // response before the client reads it.
    shutdown(c.fd, SHUT_WR);
    c.lingering = true;
    c.linger_until = now + options.linger_timeout;
    c.in.clear();
    c.in.shrink_to_fit();
    c.head_started.reset();
    return;
  }
  if (c.peer_closed) close_connection(c);  // what is left can never become a request
}

bool HttpServer::Loop::produce(Connection& c, Clock::time_point now) {
  bool queued = false;
  while (!c.close_after_write && c.out.size() - c.out_off < kOutHighWater && c.pending.size() < kMaxQueuedResponses) {
    const ParsedHead p = parse_request_head(c.in, options.head);
    if (p.state == ParseState::kIncomplete) break;
    queued = true;
    if (p.state == ParseState::kError) {
      refuse(c, p.error_status, p.error, now);
      break;
    }
    c.in.erase(0, p.bytes);
    // The next request's deadline runs from now: its bytes were waiting behind this one.
    if (c.in.empty()) {
      c.head_started.reset();
    } else {
      c.head_started = now;
    }
    if (p.head.has_body) {
      refuse(c, 413, "chokepoint serve takes no request body", now);
      break;
    }
    answer(c, p.head, now);
  }
  return queued;
}

void HttpServer::Loop::answer(Connection& c, const RequestHead& head, Clock::time_point now) {
  HttpResponse r = handler(HttpRequest{head.method, head.path});
  ResponseHead h;
  h.status = r.status;
  h.content_type = std::move(r.content_type);
  h.content_length = r.body.size();
  h.headers = std::move(r.headers);
  h.close = head.close;
  h.keep_alive = head.http10 && !head.close;
  static const std::string kNoBody;
  queue(c, h, head.method == "HEAD" ? kNoBody : r.body, std::move(r.on_cut_off), now);
  if (head.close) c.close_after_write = true;
}

void HttpServer::Loop::refuse(Connection& c, int status, const std::string& why, Clock::time_point now) {
  ResponseHead h;
  h.status = status;
  h.content_type = "text/plain; charset=utf-8";
  const std::string body = why + "\n";
  h.content_length = body.size();
  h.close = true;
  queue(c, h, body, nullptr, now);
  c.close_after_write = true;
  c.in.clear();  // never read as requests: the stream's framing is lost
  c.head_started.reset();
}

void HttpServer::Loop::queue(Connection& c, const ResponseHead& head, const std::string& body,
                             std::function<void()> on_cut_off, Clock::time_point now) {
  if (!c.writing()) {
    c.out.clear();
    c.out_off = 0;
    c.write_started = now;
  } else if (c.out_off > 0) {
    c.out.erase(0, c.out_off);  // keep the buffer to what is unsent
    for (Pending& p : c.pending) p.end -= c.out_off;
    c.out_off = 0;
  }
  append_response_head(head, &c.out);
  c.out += body;
  c.pending.push_back(Pending{c.out.size(), std::move(on_cut_off)});
}

// Sends until the socket is full; false when the connection failed (and is closed).
bool HttpServer::Loop::flush(Connection& c, Clock::time_point now) {
  while (c.writing()) {
    const size_t n = std::min(c.out.size() - c.out_off, kSendChunk);
    const ssize_t sent = send(c.fd, c.out.data() + c.out_off, n, MSG_NOSIGNAL);
    if (sent > 0) {
      c.out_off += static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_connection(c);  // reset or gone: its unsent responses are cut off
    return false;
  }
  while (!c.pending.empty() && c.pending.front().end <= c.out_off) c.pending.pop_front();
  if (!c.writing() && !c.out.empty()) {
    c.out.clear();
    c.out_off = 0;
    if (c.out.capacity() > kKeepOutCapacity) std::string().swap(c.out);
    c.idle_since = now;
    if (!c.in.empty()) c.head_started = now;
  }
  return true;
}

Status HttpServer::Loop::run() {
  std::vector<pollfd> fds;
  while (true) {
    Clock::time_point now = Clock::now();
    expire(now);
    sweep();
    fds.clear();
    fds.push_back(pollfd{stop_fd, POLLIN, 0});
    fds.push_back(pollfd{now >= accept_paused_until ? listen_fd : -1, POLLIN, 0});  // -1: not polled
    for (const auto& c : conns) {
      short events = 0;
      const bool room = c->in.size() < 2 * options.head.max_head_bytes;
      if (c->lingering || (room && !c->peer_closed && !c->close_after_write)) events |= POLLIN;
      if (c->writing()) events |= POLLOUT;
      fds.push_back(pollfd{c->fd, events, 0});
    }
    const int n = poll(fds.data(), fds.size(), poll_timeout_ms(now));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Error("poll: " + errno_text(errno));
    }
    if (fds[0].revents != 0) break;
    now = Clock::now();
    for (size_t i = 0; i < conns.size(); ++i) {
      if (fds[i + 2].revents != 0) on_events(*conns[i], fds[i + 2].revents, now);
    }
    sweep();
    if ((fds[1].revents & POLLIN) != 0) accept_ready(now);
  }
  for (auto& c : conns) close_connection(*c);
  conns.clear();
  return Status::Ok();
}

HttpServer::HttpServer(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::listen(const std::string& host, int port, HttpServerOptions options,
                                                       HttpHandler handler) {
  auto loop = std::make_unique<Loop>();
  loop->options = options;
  loop->handler = std::move(handler);
  loop->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (loop->stop_fd < 0) return Status::Error("eventfd: " + errno_text(errno));
  Result<int> fd = open_listener(host, port);
  if (!fd.ok()) return fd.status();
  loop->listen_fd = fd.value();
  loop->port = bound_port(loop->listen_fd);
  if (loop->port <= 0) return Status::Error("getsockname: " + errno_text(errno));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(loop)));
}

int HttpServer::port() const { return loop_->port; }

Status HttpServer::run() { return loop_->run(); }

void HttpServer::stop() {
  const uint64_t one = 1;
  // Only fails when the counter would overflow: it is already set.
  [[maybe_unused]] const ssize_t n = write(loop_->stop_fd, &one, sizeof one);
}

}  // namespace chokepoint::serve
