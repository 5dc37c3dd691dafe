// The HTTP server of `chokepoint serve` driven over real loopback sockets (127.0.0.1
// only): caps, refusals, pipelining, deadlines, the connection cap, restart. Deadlines
// are 300 ms here instead of seconds; every wait is bounded by a socket timeout or a
// fixed number of tries.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_message.h"
#include "serve/http_server.h"
#include "serve/server.h"

namespace chokepoint::serve {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using Clock = std::chrono::steady_clock;

// ---- the parser alone ----

ParsedHead parse(const std::string& text) { return parse_request_head(text, HeadLimits{}); }

TEST(ServeHttpParse, CompleteIncompleteAndTheBytesTaken) {
  EXPECT_EQ(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n").state, ParseState::kIncomplete);
  const std::string two = "GET /metrics?a=b HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\n";
  const ParsedHead p = parse(two);
  ASSERT_EQ(p.state, ParseState::kComplete);
  EXPECT_EQ(p.bytes, two.find("GET /", 5));
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_EQ(p.head.path, "/metrics");
  EXPECT_FALSE(p.head.close);
  EXPECT_FALSE(p.head.has_body);
}

TEST(ServeHttpParse, LenientWhereTheRfcAllows) {
  const ParsedHead lf = parse("\r\n\nHEAD http://node:9400/metrics HTTP/1.0\nConnection: Keep-Alive\n\n");
  ASSERT_EQ(lf.state, ParseState::kComplete);
  EXPECT_EQ(lf.head.method, "HEAD");
  EXPECT_EQ(lf.head.path, "/metrics");
  EXPECT_TRUE(lf.head.http10);
  EXPECT_FALSE(lf.head.close);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\n\r\n").head.close);
  EXPECT_TRUE(parse("GET / HTTP/1.1\r\nconnection: TE, close\r\n\r\n").head.close);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nContent-Length: 00\r\n\r\n").head.has_body);
  EXPECT_TRUE(parse("GET / HTTP/1.1\r\nContent-Length: 1\r\n\r\n").head.has_body);
  EXPECT_TRUE(parse("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").head.has_body);
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nUser-Agent: caf\xc3\xa9\r\n\r\n").state, ParseState::kComplete);
}

TEST(ServeHttpParse, RefusalsAndTheirStatus) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"GARBAGE\r\n\r\n", 400},
      {"GET /\r\n\r\n", 400},
      {"GET  / HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nName : v\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
      {"GET / HTTP/1.1\rX: y\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"GET metrics HTTP/1.1\r\n\r\n", 400},
      {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"s, 400},  // TLS to a plain port
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
  };
  for (const auto& [text, status] : cases) {
    const ParsedHead p = parse(text);
    EXPECT_EQ(p.state, ParseState::kError) << text;
    EXPECT_EQ(p.error_status, status) << text;
  }
}

TEST(ServeHttpParse, CapsOnTheHead) {
  const HeadLimits limits;
  std::string at_cap = "GET / HTTP/1.1\r\nX: ";
  at_cap += std::string(limits.max_head_bytes - at_cap.size() - 4, 'a') + "\r\n\r\n";
  ASSERT_EQ(at_cap.size(), limits.max_head_bytes);
  EXPECT_EQ(parse(at_cap).state, ParseState::kComplete);
  const std::string over = "GET / HTTP/1.1\r\nX: a" + at_cap.substr(std::string("GET / HTTP/1.1\r\nX: ").size());
  EXPECT_EQ(parse(over).error_status, 431);
  // Refused as soon as the cap is passed, before any end of the head arrives.
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nX: " + std::string(10000, 'a')).error_status, 431);
  EXPECT_EQ(parse("GET /" + std::string(10000, 'a')).error_status, 414);
  std::string lines = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 64; ++i) lines += "X" + std::to_string(i) + ": y\r\n";
  EXPECT_EQ(parse(lines + "\r\n").state, ParseState::kComplete);
  EXPECT_EQ(parse(lines + "X: y\r\n").error_status, 431);  // the 65th line, before the head ends
}

// ---- the server over sockets ----

// Answers /n/<text> with <text>, /big/<bytes> with that many bytes (counting the cut-off
// ones), / with "index"; other paths 404, other methods 405.
struct TestHandler {
  std::shared_ptr<std::atomic<int>> cut_offs = std::make_shared<std::atomic<int>>(0);
  HttpResponse operator()(const HttpRequest& req) const {
    HttpResponse r;
    r.content_type = "text/plain";
    if (req.method != "GET" && req.method != "HEAD") {
      r.status = 405;
      r.headers.emplace_back("Allow", "GET, HEAD");
    } else if (req.path.rfind("/n/", 0) == 0) {
      r.body = req.path.substr(3);
    } else if (req.path.rfind("/big/", 0) == 0) {
      r.body.assign(std::stoul(req.path.substr(5)), 'x');
      r.on_cut_off = [c = cut_offs] { c->fetch_add(1); };
    } else if (req.path == "/") {
      r.body = "index";
    } else {
      r.status = 404;
    }
    return r;
  }
};

class Running {
 public:
  static std::unique_ptr<Running> start(HttpServerOptions options, HttpHandler handler, int port = 0) {
    auto s = HttpServer::listen("127.0.0.1", port, options, std::move(handler));
    if (!s.ok()) {
      ADD_FAILURE() << s.status().message();
      return nullptr;
    }
    return std::unique_ptr<Running>(new Running(std::move(s.value())));
  }
  ~Running() {
    server_->stop();
    thread_.join();
  }
  int port() const { return server_->port(); }

 private:
  explicit Running(std::unique_ptr<HttpServer> s) : server_(std::move(s)) {
    thread_ = std::thread([this] { EXPECT_TRUE(server_->run().ok()); });
  }
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

HttpServerOptions fast_options() {
  HttpServerOptions o;
  o.head_timeout = 300ms;
  o.idle_timeout = 300ms;
  o.write_timeout = 300ms;
  o.linger_timeout = 300ms;
  return o;
}

// A blocking client socket whose every read and write gives up after 5 s.
int connect_to(int port, int rcvbuf = 0) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  const timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

struct Reply {
  int status = 0;
  std::string head;  // status line and fields
  std::string body;
  std::string header(const std::string& name) const {
    const size_t at = head.find("\r\n" + name + ": ");
    if (at == std::string::npos) return "";
    const size_t start = at + name.size() + 4;
    return head.substr(start, head.find("\r\n", start) - start);
  }
};

// One response from `fd`; bytes read past it stay in *buf. nullopt when the connection
// ends (or times out) first.
std::optional<Reply> read_reply(int fd, std::string* buf, bool head_request = false) {
  char chunk[64 * 1024];
  size_t end = std::string::npos;
  for (int i = 0; i < 100000 && (end = buf->find("\r\n\r\n")) == std::string::npos; ++i) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buf->append(chunk, static_cast<size_t>(n));
  }
  if (end == std::string::npos || buf->size() < 12) return std::nullopt;
  Reply r;
  r.head = buf->substr(0, end);
  r.status = std::stoi(buf->substr(9, 3));
  const std::string length = r.header("Content-Length");
  const size_t body = head_request || length.empty() ? 0 : std::stoul(length);
  for (int i = 0; i < 100000 && buf->size() < end + 4 + body; ++i) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buf->append(chunk, static_cast<size_t>(n));
  }
  if (buf->size() < end + 4 + body) return std::nullopt;
  r.body = buf->substr(end + 4, body);
  buf->erase(0, end + 4 + body);
  return r;
}

std::optional<Reply> request(int port, const std::string& text) {
  const int fd = connect_to(port);
  if (fd < 0) return std::nullopt;
  std::string buf;
  std::optional<Reply> r = send_all(fd, text) ? read_reply(fd, &buf) : std::nullopt;
  close(fd);
  return r;
}

// True when the server ends the connection (EOF or reset) within `within`; input
// before that is read and dropped.
bool closed_within(int fd, std::chrono::milliseconds within) {
  const auto until = Clock::now() + within;
  char chunk[4096];
  for (int i = 0; i < 100000 && Clock::now() < until; ++i) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) continue;
    const ssize_t n = recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
  }
  return false;
}

TEST(ServeHttp, GetHeadAndKeepAlive) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  const int fd = connect_to(s->port());
  ASSERT_GE(fd, 0);
  std::string buf;
  ASSERT_TRUE(send_all(fd, "GET /n/1 HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "1");
  EXPECT_EQ(r->header("Content-Type"), "text/plain");
  EXPECT_EQ(r->header("Connection"), "");
  ASSERT_TRUE(send_all(fd, "HEAD /big/1000 HTTP/1.1\r\nHost: t\r\n\r\n"));
  r = read_reply(fd, &buf, /*head_request=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header("Content-Length"), "1000");
  ASSERT_TRUE(send_all(fd, "GET /n/2 HTTP/1.1\r\nHost: t\r\n\r\n"));
  r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "2");  // the HEAD sent no body: the next reply starts right after its head
  close(fd);
}

TEST(ServeHttp, ExporterRoutesAndCounters) {
  ScrapeCounters counters;
  auto snap = std::make_shared<const NodeSnapshot>();
  auto s = Running::start(HttpServerOptions{}, exporter_handler([snap] { return snap; }, &counters));
  ASSERT_TRUE(s);
  auto r = request(s->port(), "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r->body.find("chokepoint_serve_scrapes_total"), std::string::npos);
  r = request(s->port(), "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("Content-Type"), "text/html");
  EXPECT_NE(r->body.find("<a href=\"/metrics\">"), std::string::npos);
  r = request(s->port(), "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  for (const char* method : {"POST", "DELETE", "PUT", "OPTIONS", "get"}) {
    r = request(s->port(), std::string(method) + " /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
    ASSERT_TRUE(r) << method;
    EXPECT_EQ(r->status, 405) << method;
    EXPECT_EQ(r->header("Allow"), "GET, HEAD") << method;
  }
  const int fd = connect_to(s->port());
  std::string buf;
  ASSERT_TRUE(send_all(fd, "HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\n"));
  r = read_reply(fd, &buf, /*head_request=*/true);
  close(fd);
  ASSERT_TRUE(r);
  EXPECT_GT(std::stoul(r->header("Content-Length")), 100u);
  EXPECT_EQ(counters.scrapes.load(), 2u);  // GET and HEAD of /metrics
  EXPECT_EQ(counters.errors.load(), 0u);
}

TEST(ServeHttp, PipelinedRequestsAllAnsweredInOrder) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  for (const bool big : {false, true}) {
    const int fd = connect_to(s->port());
    ASSERT_GE(fd, 0);
    std::string all;
    // Big answers (150 x 100 KB) make the server hold requests while the client reads;
    // small ones with padded heads (150 x 200 B) pass the input buffer's 16 KiB.
    for (int i = 0; i < 150; ++i) {
      all += "GET " + (big ? "/big/" + std::to_string(100000 + i) : "/n/" + std::to_string(i)) +
             " HTTP/1.1\r\nHost: t\r\n" + (big ? "" : "X-Pad: " + std::string(150, 'p') + "\r\n") + "\r\n";
    }
    ASSERT_TRUE(send_all(fd, all));
    std::string buf;
    int answered = 0;
    for (int i = 0; i < 150; ++i) {
      const auto r = read_reply(fd, &buf);
      if (!r || r->status != 200) break;
      const bool in_order = big ? r->body.size() == size_t(100000 + i) : r->body == std::to_string(i);
      if (!in_order) break;
      ++answered;
    }
    EXPECT_EQ(answered, 150) << (big ? "big" : "small");
    close(fd);
  }
}

TEST(ServeHttp, Http10AndConnectionClose) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  int fd = connect_to(s->port());
  std::string buf;
  ASSERT_TRUE(send_all(fd, "GET /n/7 HTTP/1.0\r\n\r\n"));
  auto r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "7");
  EXPECT_EQ(r->header("Connection"), "close");
  EXPECT_TRUE(closed_within(fd, 2000ms));
  close(fd);

  // Connection: close ends it after that answer; the request behind it is not answered.
  fd = connect_to(s->port());
  buf.clear();
  ASSERT_TRUE(send_all(fd, "GET /n/8 HTTP/1.1\r\nConnection: close\r\n\r\nGET /n/9 HTTP/1.1\r\n\r\n"));
  r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "8");
  EXPECT_EQ(r->header("Connection"), "close");
  EXPECT_FALSE(read_reply(fd, &buf));
  close(fd);

  // HTTP/1.0 that asks for keep-alive keeps it.
  fd = connect_to(s->port());
  buf.clear();
  ASSERT_TRUE(send_all(fd, "GET /n/a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /n/b HTTP/1.0\r\n\r\n"));
  r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header("Connection"), "keep-alive");
  r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "b");
  EXPECT_TRUE(closed_within(fd, 2000ms));
  close(fd);
}

TEST(ServeHttp, HeadCaps431And414ThenClose) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  std::string lines = "GET /n/ok HTTP/1.1\r\n";
  for (int i = 0; i < 64; ++i) lines += "X" + std::to_string(i) + ": y\r\n";
  auto r = request(s->port(), lines + "\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);

  struct Case {
    std::string text;
    int status;
  };
  const std::vector<Case> cases = {
      {lines + "X: y\r\n\r\n", 431},
      {"GET / HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n", 431},
      {"GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", 414},
  };
  for (const Case& c : cases) {
    const int fd = connect_to(s->port());
    std::string buf;
    ASSERT_TRUE(send_all(fd, c.text));
    r = read_reply(fd, &buf);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.status);
    EXPECT_EQ(r->header("Connection"), "close");
    EXPECT_TRUE(closed_within(fd, 2000ms));
    close(fd);
  }

  // 4 MB of header bytes on one connection: refused at the cap, the rest discarded.
  const int fd = connect_to(s->port());
  std::string buf;
  bool sent = send_all(fd, "GET / HTTP/1.1\r\n");
  const std::string flood(64 * 1024, 'h');
  for (int i = 0; i < 64 && sent; ++i) sent = send_all(fd, flood);
  r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  close(fd);
  r = request(s->port(), "GET /n/still HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "still");
}

TEST(ServeHttp, BodiesRefused413WithoutReadingThem) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  auto r = request(s->port(), "GET /n/zero HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "zero");
  for (const std::string& text : {std::string("POST /n/x HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789"),
                                  std::string("GET /n/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")}) {
    const int fd = connect_to(s->port());
    std::string buf;
    ASSERT_TRUE(send_all(fd, text));
    r = read_reply(fd, &buf);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_TRUE(closed_within(fd, 2000ms));
    close(fd);
  }
  // A GET with a 10 MB body: the client sends all of it (the server drops it while
  // lingering), then reads the 413.
  const int fd = connect_to(s->port());
  std::string buf;
  const size_t total = 10 * 1024 * 1024;
  bool sent = send_all(fd, "GET /n/x HTTP/1.1\r\nContent-Length: " + std::to_string(total) + "\r\n\r\n");
  const std::string chunk(1024 * 1024, 'b');
  for (size_t i = 0; i < total / chunk.size() && sent; ++i) sent = send_all(fd, chunk);
  r = read_reply(fd, &buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  close(fd);
}

TEST(ServeHttp, MalformedIs400AndClose) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  for (const std::string& text :
       {std::string("GARBAGE\r\n\r\n"), std::string("GET / HTTP/1.1\r\nNo colon\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), "\x16\x03\x01\x02\x00\r\n\r\n"s}) {
    const int fd = connect_to(s->port());
    std::string buf;
    ASSERT_TRUE(send_all(fd, text));
    const auto r = read_reply(fd, &buf);
    ASSERT_TRUE(r) << text;
    EXPECT_EQ(r->status, 400) << text;
    EXPECT_TRUE(closed_within(fd, 2000ms));
    close(fd);
  }
}

TEST(ServeHttp, SlowlorisClosedByTheHeadDeadline) {
  auto s = Running::start(fast_options(), TestHandler{});
  ASSERT_TRUE(s);
  const int fd = connect_to(s->port());
  ASSERT_TRUE(send_all(fd, "GET /n/slow HTTP/1.1\r\n"));
  const auto t0 = Clock::now();
  bool closed = false;
  // A header line every 50 ms: each read is quick, only the deadline can end it.
  for (int i = 0; i < 60 && !closed; ++i) {
    closed = closed_within(fd, 50ms) || !send_all(fd, "X-" + std::to_string(i) + ": y\r\n");
  }
  const auto took = Clock::now() - t0;
  EXPECT_TRUE(closed);
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2000ms);
  close(fd);

  // An idle connection goes after the idle timeout.
  const int idle = connect_to(s->port());
  const auto t1 = Clock::now();
  EXPECT_TRUE(closed_within(idle, 3000ms));
  EXPECT_GE(Clock::now() - t1, 250ms);
  close(idle);
}

TEST(ServeHttp, AReaderThatDoesNotReadIsDroppedAndCounted) {
  TestHandler handler;
  auto s = Running::start(fast_options(), handler);
  ASSERT_TRUE(s);
  const int fd = connect_to(s->port(), /*rcvbuf=*/4096);
  ASSERT_TRUE(send_all(fd, "GET /big/16000000 HTTP/1.1\r\n\r\n"));
  for (int i = 0; i < 100 && handler.cut_offs->load() == 0; ++i) std::this_thread::sleep_for(30ms);
  EXPECT_EQ(handler.cut_offs->load(), 1);
  close(fd);
  const auto r = request(s->port(), "GET /n/next HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "next");
}

TEST(ServeHttp, AClientGoneMidResponseIsCounted) {
  TestHandler handler;
  auto s = Running::start(HttpServerOptions{}, handler);
  ASSERT_TRUE(s);
  const int fd = connect_to(s->port(), /*rcvbuf=*/4096);
  ASSERT_TRUE(send_all(fd, "GET /big/8000000 HTTP/1.1\r\n\r\n"));
  char some[64];
  ASSERT_GT(recv(fd, some, sizeof some, 0), 0);
  const linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  for (int i = 0; i < 100 && handler.cut_offs->load() == 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(handler.cut_offs->load(), 1);
  const auto r = request(s->port(), "GET /n/alive HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "alive");
}

TEST(ServeHttp, IdleAndSlowClientsOverTheCapDoNotBlockAScrape) {
  HttpServerOptions o;
  o.max_connections = 8;
  auto s = Running::start(o, TestHandler{});
  ASSERT_TRUE(s);
  std::vector<int> held;
  for (int i = 0; i < 20; ++i) held.push_back(connect_to(s->port()));  // idle
  // Slowloris heads.
  for (int i = 0; i < 12; ++i) {
    held.push_back(connect_to(s->port()));
    send_all(held.back(), "GET / HTTP/1.1\r\nX: ");
  }
  for (int round = 0; round < 5; ++round) {
    const auto t0 = Clock::now();
    const auto r = request(s->port(), "GET /n/" + std::to_string(round) + " HTTP/1.1\r\n\r\n");
    ASSERT_TRUE(r) << round;
    EXPECT_EQ(r->body, std::to_string(round));
    EXPECT_LT(Clock::now() - t0, 1000ms);
  }
  for (int fd : held) close(fd);
}

TEST(ServeHttp, RestartOnTheSamePortRightAfterStop) {
  int port = 0;
  {
    auto a = Running::start(HttpServerOptions{}, TestHandler{});
    ASSERT_TRUE(a);
    port = a->port();
    // The server closes first (Connection: close): its side of the connection stays in
    // TIME_WAIT, which a bind without SO_REUSEADDR refuses.
    const int fd = connect_to(port);
    std::string buf;
    ASSERT_TRUE(send_all(fd, "GET /n/a HTTP/1.1\r\nConnection: close\r\n\r\n"));
    ASSERT_TRUE(read_reply(fd, &buf));
    EXPECT_TRUE(closed_within(fd, 2000ms));
    close(fd);
  }
  auto b = Running::start(HttpServerOptions{}, TestHandler{}, port);
  ASSERT_TRUE(b);
  const auto r = request(port, "GET /n/b HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "b");
}

TEST(ServeHttp, APortInUseFailsWithTheReason) {
  auto a = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(a);
  const auto b = HttpServer::listen("127.0.0.1", a->port(), HttpServerOptions{}, TestHandler{});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("Address already in use"), std::string::npos) << b.status().message();
  // Not an address of this machine (TEST-NET-1): numeric, so no resolver is asked.
  const auto bad = HttpServer::listen("192.0.2.1", 0, HttpServerOptions{}, TestHandler{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Cannot assign requested address"), std::string::npos);
}

TEST(ServeHttp, StopEndsRunWithConnectionsOpen) {
  auto s = Running::start(HttpServerOptions{}, TestHandler{});
  ASSERT_TRUE(s);
  const int idle = connect_to(s->port());
  const int partial = connect_to(s->port());
  send_all(partial, "GET / HT");
  const auto t0 = Clock::now();
  s.reset();
  EXPECT_LT(Clock::now() - t0, 1000ms);
  EXPECT_TRUE(closed_within(idle, 1000ms));
  close(idle);
  close(partial);
}

}  // namespace
}  // namespace chokepoint::serve
