// What the live view of `run` / `watch` shows: the session's latest readings, handed to
// the renderer each time the view is drawn. The monitor (live/monitor.h) owns the data; the
// rendering is the presentation layer's (report/live_panel.h), passed in as a LiveRenderer
// so this layer does not depend on the one above it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "live/session.h"
#include "samples/metadata.h"

namespace chokepoint::live {

struct ViewInput {
  double elapsed_s = 0;
  std::string title;  // the command, or "pid 4242"
  std::string dir;    // recording directory
  const samples::RunMeta* meta = nullptr;
  const Latest* latest = nullptr;
  const std::map<int64_t, samples::ProcessMeta>* processes = nullptr;
  int cpus = 0;
};

// Draws the view: the panel for a terminal `width` columns wide in at most `max_lines`
// lines, or one plain line for a pipe. Unset functions show nothing.
struct LiveRenderer {
  std::function<std::vector<std::string>(const ViewInput& in, int width, int max_lines)> panel;
  std::function<std::string(const ViewInput& in)> line;
};

}  // namespace chokepoint::live
