#include "serve/server.h"

#include <malloc.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <memory>
#include <mutex>
#include <thread>

#include "serve/exposition.h"

namespace chokepoint::serve {
namespace {

constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

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

HttpHandler exporter_handler(std::function<std::shared_ptr<const NodeSnapshot>()> latest, ScrapeCounters* counters) {
  return [latest = std::move(latest), counters](const HttpRequest& req) {
    HttpResponse res;
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.headers.emplace_back("Allow", "GET, HEAD");
      res.content_type = "text/plain";
      res.body = "chokepoint serve is read-only: GET /metrics\n";
    } else if (req.path == "/metrics") {
      const std::shared_ptr<const NodeSnapshot> snap = latest();
      const ServerCounters c{counters->scrapes.fetch_add(1) + 1, counters->errors.load()};
      res.content_type = kContentType;
      res.body = render_exposition(*snap, c);
      res.on_cut_off = [counters] { counters->errors.fetch_add(1); };
    } else if (req.path == "/") {
      res.content_type = "text/html";
      res.body = kIndexPage;
    } else {
      res.status = 404;
      res.content_type = "text/plain";
      res.body = "not found: chokepoint serve answers /metrics\n";
    }
    return res;
  };
}

Status serve(const ServeOptions& options) {
  auto addr = parse_listen(options.listen);
  if (!addr.ok()) return addr.status();
  const ListenAddress a = addr.value();

  // Bound before anything starts, so that a port in use fails at once with the reason.
  Published published;
  ScrapeCounters counters;
  auto bound = HttpServer::listen(a.host, a.port, options.http,
                                  exporter_handler([&published] { return published.get(); }, &counters));
  if (!bound.ok()) return bound.status();
  HttpServer& http = *bound.value();

  // SIGINT/SIGTERM are taken by sigwait below, so they are blocked before any thread
  // starts (threads inherit the mask); SIGPIPE is ignored (the server sends with
  // MSG_NOSIGNAL; this covers any other write to a closed pipe).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
  std::signal(SIGPIPE, SIG_IGN);

  // One malloc arena for the whole process. With glibc's default (an arena per thread that
  // allocates: the sampler and the HTTP threads) RSS grew ~2 KB/s with 8 jobs and two GPUs
  // at a 100 ms interval while heaptrack's peak heap stayed 0.79 MB over 15 s and 60 s runs:
  // fragmentation, not a leak. One arena: flat with 4 jobs, ~0.7 KB/s with 8 over 50 s
  // (docs/BENCHMARKS.md "chokepoint serve"). The threads rarely allocate at once.
  mallopt(M_ARENA_MAX, 1);
  std::unique_ptr<NodeSampler> node = NodeSampler::start(options.node);
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

  const bool v6 = a.host.find(':') != std::string::npos;
  const std::string url = "http://" + (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(http.port()) +
                          "/metrics";
  if (options.on_listening) options.on_listening(url);
  Status loop_status = Status::Ok();
  std::atomic<bool> server_done{false};
  std::thread server([&] {
    loop_status = http.run();
    server_done = true;
  });
  // Until a stop signal; sigtimedwait so that a server that ended by itself is noticed.
  Status result = Status::Ok();
  const timespec poll{0, 200'000'000};
  while (true) {
    const int sig = sigtimedwait(&stop_signals, nullptr, &poll);
    if (sig == SIGINT || sig == SIGTERM) break;
    if (server_done) {
      result = Status::Error("the HTTP server on " + url + " stopped: " + loop_status.message());
      break;
    }
  }
  http.stop();
  server.join();
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
