#include "serve/server.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "serve/exposition.h"

namespace chokepoint::serve {
namespace {

constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr size_t kChunkBytes = 16 * 1024;

// Binds a socket like the server will, to say why it cannot (httplib only says false).
Status probe_bind(const ListenAddress& a) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(a.port);
  if (const int rc = getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return Status::Error(ErrorCode::kUsage, "cannot listen on " + a.host + ": " + gai_strerror(rc));
  }
  const int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) err = errno;
    close(fd);
  }
  freeaddrinfo(res);
  if (err == 0) return Status::Ok();
  std::string msg = "cannot listen on " + a.host + ":" + port + ": " + std::strerror(err);
  if (err == EADDRINUSE)
    msg += " (another program, perhaps another chokepoint serve, holds the port; pick one with --listen)";
  return Status::Error(ErrorCode::kFailed, msg);
}

const char* kIndexPage =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>chokepoint serve</title></head><body>"
    "<h1>chokepoint serve</h1><p>A Prometheus exporter of this node's GPUs, host and jobs, with the live "
    "diagnosis of each job.</p><p><a href=\"/metrics\">/metrics</a></p></body></html>\n";

class Published {
 public:
  void set(std::shared_ptr<const NodeSnapshot> s) {
    std::lock_guard<std::mutex> l(mu_);
    snap_ = std::move(s);
  }
  std::shared_ptr<const NodeSnapshot> get() const {
    std::lock_guard<std::mutex> l(mu_);
    return snap_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const NodeSnapshot> snap_;
};

}  // namespace

Result<ListenAddress> parse_listen(const std::string& text) {
  ListenAddress a;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::Error(ErrorCode::kUsage, "--listen '" + text + "' is not [IPv6]:PORT");
    }
    a.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) {
      return Status::Error(ErrorCode::kUsage, "--listen '" + text + "' is not HOST:PORT (e.g. 127.0.0.1:9400)");
    }
    a.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return Status::Error(ErrorCode::kUsage, "--listen '" + text + "': the port must be a number 0..65535");
  }
  a.port = std::stoi(port);
  if (a.host.empty()) a.host = "0.0.0.0";
  return a;
}

Status serve(const ServeOptions& options) {
  auto addr = parse_listen(options.listen);
  if (!addr.ok()) return addr.status();
  const ListenAddress a = addr.value();
  if (a.port != 0) {
    if (Status st = probe_bind(a); !st.ok()) return st;
  }

  // SIGINT/SIGTERM are taken by sigwait below, so they are blocked before any thread
  // starts (threads inherit the mask); SIGPIPE from a closed client socket is ignored.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
  std::signal(SIGPIPE, SIG_IGN);

  // One malloc arena for the whole process. With glibc's default (an arena per thread that
  // allocates: the sampler and each HTTP worker) RSS grew ~2 KB/s with 8 jobs and two GPUs
  // at a 100 ms interval while heaptrack's peak heap stayed 0.79 MB over 15 s and 60 s runs:
  // fragmentation, not a leak. One arena: flat with 4 jobs, ~0.7 KB/s with 8 over 50 s
  // (docs/BENCHMARKS.md "chokepoint serve"). The threads rarely allocate at once.
  mallopt(M_ARENA_MAX, 1);
  std::unique_ptr<NodeSampler> node = NodeSampler::start(options.node);
  Published published;
  node->tick(samples::now());
  published.set(std::make_shared<const NodeSnapshot>(node->snapshot()));

  std::atomic<bool> stopping{false};
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  std::thread sampler([&] {
    const auto period = std::chrono::nanoseconds(options.node.interval_ns);
    auto next = std::chrono::steady_clock::now() + period;
    std::unique_lock<std::mutex> l(stop_mu);
    while (!stop_cv.wait_until(l, next, [&] { return stopping.load(); })) {
      l.unlock();
      node->tick(samples::now());
      published.set(std::make_shared<const NodeSnapshot>(node->snapshot()));
      l.lock();
      next += period;
      const auto now = std::chrono::steady_clock::now();
      if (next < now) next = now + period;  // a slow tick: skip, do not burst
    }
  });

  std::atomic<uint64_t> scrapes{0}, scrape_errors{0};
  httplib::Server http;
  http.set_payload_max_length(1024);
  http.set_read_timeout(5, 0);
  http.set_write_timeout(5, 0);
  http.set_keep_alive_max_count(100);
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    const std::shared_ptr<const NodeSnapshot> snap = published.get();
    ServerCounters c{scrapes.fetch_add(1) + 1, scrape_errors.load()};
    auto page = std::make_shared<const std::string>(render_exposition(*snap, c));
    res.set_content_provider(page->size(), kContentType,
                             [page, &scrape_errors](size_t offset, size_t length, httplib::DataSink& sink) {
                               const size_t n = std::min(length, kChunkBytes);
                               if (!sink.write(page->data() + offset, n)) {
                                 scrape_errors.fetch_add(1);
                                 return false;
                               }
                               return true;
                             });
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kIndexPage, "text/html"); });
  auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("chokepoint serve is read-only: GET /metrics\n", "text/plain");
  };
  http.Post(".*", not_allowed);
  http.Put(".*", not_allowed);
  http.Patch(".*", not_allowed);
  http.Delete(".*", not_allowed);
  http.Options(".*", not_allowed);

  int port = a.port;
  bool bound = false;
  if (port == 0) {
    port = http.bind_to_any_port(a.host);
    bound = port > 0;
  } else {
    bound = http.bind_to_port(a.host, port);
  }
  Status result = Status::Ok();
  std::thread server;
  std::atomic<bool> server_done{false};
  if (!bound) {
    result = Status::Error("cannot listen on " + options.listen);
  } else {
    const bool v6 = a.host.find(':') != std::string::npos;
    const std::string url = "http://" + (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(port) + "/metrics";
    if (options.on_listening) options.on_listening(url);
    server = std::thread([&] {
      http.listen_after_bind();
      server_done = true;
    });
    // Until a stop signal; sigtimedwait so that a server that ended by itself is noticed.
    const timespec poll{0, 200'000'000};
    while (true) {
      const int sig = sigtimedwait(&stop_signals, nullptr, &poll);
      if (sig == SIGINT || sig == SIGTERM) break;
      if (server_done) {
        result = Status::Error("the HTTP server on " + url + " stopped");
        break;
      }
    }
  }
  http.stop();
  if (server.joinable()) server.join();
  {
    std::lock_guard<std::mutex> l(stop_mu);
    stopping = true;
  }
  stop_cv.notify_all();
  sampler.join();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return result;
}

}  // namespace chokepoint::serve
