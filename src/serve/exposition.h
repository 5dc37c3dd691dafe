// The Prometheus page of `chokepoint serve`: a NodeSnapshot as metric families
// (docs/SERVE.md lists them). GPU metrics keep dcgm-exporter's names, units and labels
// (gpu, UUID, pci_bus_id, device, modelName, Hostname) where the sampler reads the same
// quantity, so dashboards built for dcgm-exporter work; everything else is
// chokepoint_*, with the unit in the name and _total on counters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serve/snapshot.h"

namespace chokepoint::serve {

// What the HTTP side adds at scrape time.
struct ServerCounters {
  uint64_t scrapes = 0;
  uint64_t scrape_errors = 0;  // responses cut off by the client
};

std::string render_exposition(const NodeSnapshot& n, const ServerCounters& c);

// Every metric family name the page can hold (for the dashboard test and docs).
std::vector<std::string_view> exposition_family_names();

// The bottleneck categories a job's chokepoint_job_bound series enumerate.
std::vector<std::string_view> bound_categories();

}  // namespace chokepoint::serve
