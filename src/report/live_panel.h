// The live view of `run` / `watch`: what a person watches while the job runs. Pure
// rendering from the session's latest readings (live/view_input.h); live/terminal.h puts
// it on screen.
//
// Panel (a terminal): one header line, two lines per GPU (activity; memory, power,
// clocks, PCIe against the link), the host line (CPU split with iowait and steal, run
// queue, switches, swap, PSI), the tree line (main process, DataLoader workers, others)
// and the busiest processes. Every line is ASCII and cut to the width, so it is one
// column per byte. A reading the source cannot give prints "-", never 0. The panel is
// not coloured: an escape sequence would break the cut by bytes, and the terminal's
// scroll region already sets it apart. Its width comes in RenderOptions like every view's.
// Line (a pipe or a dumb terminal): one plain line with the same headline figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "live/view_input.h"
#include "report/style.h"

namespace chokepoint::report {

using live::ViewInput;

// At most `max_lines` lines (the GPUs beyond what fits are summed up in one line).
std::vector<std::string> render_live_panel(const ViewInput& in, const RenderOptions& options, int max_lines);
std::string render_live_line(const ViewInput& in);

// The renderer the monitor draws with.
live::LiveRenderer live_renderer();

// "1.2 GB/s", "850 MB/s", "12 kB/s"; "-" for a missing value.
std::string format_rate(std::optional<double> bytes_per_s);

}  // namespace chokepoint::report
