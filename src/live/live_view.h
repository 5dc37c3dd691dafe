// The live view of `run` / `watch`: what a person watches while the job runs. Pure
// rendering from the session's latest readings; live/terminal.h puts it on screen.
//
// Panel (a terminal): one header line, two lines per GPU (activity; memory, power,
// clocks, PCIe against the link), the host line (CPU split with iowait and steal, run
// queue, switches, swap, PSI), the tree line (main process, DataLoader workers, others)
// and the busiest processes. Every line is ASCII and cut to the width, so it is one
// column per byte. A reading the source cannot give prints "-", never 0. The panel is
// not coloured: an escape sequence would break the cut by bytes, and the terminal's
// scroll region already sets it apart; colour in the human views is report/style.h's.
// Line (a pipe or a dumb terminal): one plain line with the same headline figures.
#pragma once

#include <cstdint>
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

// At most `max_lines` lines (the GPUs beyond what fits are summed up in one line).
std::vector<std::string> render_panel(const ViewInput& in, int width, int max_lines);
std::string render_line(const ViewInput& in);

// "1.2 GB/s", "850 MB/s", "12 kB/s"; "-" for a missing value.
std::string format_rate(std::optional<double> bytes_per_s);

}  // namespace chokepoint::live
