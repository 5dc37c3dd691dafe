// `chokepoint serve`: the HTTP side of the node exporter. One thread samples at a fixed
// period (node_sampler.h) and publishes an immutable snapshot; a scrape renders the page
// from the latest snapshot (never waiting for NVML or /proc), so a slow scraper or a
// stuck GPU call cannot hold the other up.
//
// Read-only: GET (and HEAD) /metrics and a small / page; other paths 404, other
// methods 405, request bodies refused (413). The HTTP server is our own event loop
// (http_server.h) with capped heads, deadlines and a connection cap, so hostile clients
// cannot stop scrapes or grow its memory. A client that goes away mid-response only ends
// its own connection (counted in chokepoint_serve_scrape_errors_total). SIGINT or
// SIGTERM stops the server and the sampler cleanly.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "serve/http_server.h"
#include "serve/node_sampler.h"
#include "serve/snapshot.h"

namespace chokepoint::serve {

struct ServeOptions {
  std::string listen = "127.0.0.1:9400";  // HOST:PORT; [IPv6]:PORT; port 0 picks a free one
  NodeOptions node;
  // Told once the socket is bound: the URL to scrape (the port when 0 was asked).
  std::function<void(const std::string& url)> on_listening;
  HttpServerOptions http;  // caps and timeouts; the defaults are docs/SERVE.md's
};

struct ListenAddress {
  std::string host;
  int port = 0;
};
// "127.0.0.1:9400", "[::1]:9400", "0.0.0.0:0"; an empty host (":9400") is every
// interface, as node_exporter spells it. Fails on anything else.
Result<ListenAddress> parse_listen(const std::string& text);

struct ScrapeCounters {
  std::atomic<uint64_t> scrapes{0};
  std::atomic<uint64_t> errors{0};  // pages cut off: the client went away or did not read in time
};
// The exporter's answers: GET/HEAD /metrics (the page of `latest()`, counted in
// `counters`) and / (an index page); other paths 404, other methods 405 with Allow.
HttpHandler exporter_handler(std::function<std::shared_ptr<const NodeSnapshot>()> latest, ScrapeCounters* counters);

// Serves until SIGINT/SIGTERM. Fails when the address cannot be bound (in use, not an
// address of this machine, a privileged port), with the reason.
Status serve(const ServeOptions& options);

}  // namespace chokepoint::serve
