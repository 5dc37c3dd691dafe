// What the live view of `run` / `watch` shows: the session's latest readings, handed to
// the renderer each time the view is drawn. The monitor (live/monitor.h) owns the data; the
// rendering is the presentation layer's (report/live_panel.h), passed in as a LiveRenderer
// so this layer does not depend on the one above it.
#pragma once

#include <cstdint>
#include <deque>
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
  // The verdict over the last minute of samples (MonitorOptions::live_verdict), "" before
  // the first.
  std::string verdict;
};

// The verdict of the samples so far, as one line: the run's metadata, the processes seen
// and the recent ticks in, the line out. The diagnosis engine is the layers' above, so
// the CLI passes it in (pipeline/live_report.h's live_verdict_line).
using LiveVerdictFn =
    std::function<std::string(const samples::RunMeta& meta, const std::map<int64_t, samples::ProcessMeta>& processes,
                              const std::deque<samples::Tick>& ticks)>;

// Draws the view: the panel for a terminal `width` columns wide in at most `max_lines`
// lines, or one plain line for a pipe. Unset functions show nothing.
struct LiveRenderer {
  std::function<std::vector<std::string>(const ViewInput& in, int width, int max_lines)> panel;
  std::function<std::string(const ViewInput& in)> line;
};

}  // namespace chokepoint::live
