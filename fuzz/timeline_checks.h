// What the fuzzers of the importers that fill a timeline (cupti, nsys) check of what was
// read, whatever the input: parallel columns, durations not negative, devices in range,
// steps from NVTX ranges inside their ranges; then the analyses run on it, step inference
// included (a trace without annotations gets its steps from its own op sequence).
#pragma once

#include <cstdio>
#include <cstdlib>

#include "analyses/analysis.h"
#include "timeline/model.h"

namespace chokepoint::fuzz {

inline void check(bool ok, const char* fuzzer, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", fuzzer, what);
    std::abort();
  }
}

inline void check_timeline(timeline::Timeline& tl, const char* fuzzer) {
  auto check = [&](bool ok, const char* what) { fuzz::check(ok, fuzzer, what); };
  const auto& g = tl.gpu_ops;
  check(g.start.size() == g.end.size() && g.end.size() == g.name.size() && g.name.size() == g.bytes.size(),
        "ragged GPU op columns");
  for (size_t i = 0; i < g.size(); ++i) check(g.end[i] >= g.start[i], "negative duration");
  const auto& c = tl.runtime_calls;
  check(c.start.size() == c.name.size() && c.name.size() == c.cbid.size(), "ragged runtime call columns");
  check(tl.sync_events.start.size() == tl.sync_events.tid.size(), "ragged sync columns");
  for (const auto& d : g.device) check(d >= 0 && static_cast<size_t>(d) < tl.devices.size(), "device out of range");
  const auto& st = tl.steps;
  check(st.start.size() == st.how.size() && st.end.size() == st.number.size(), "ragged step columns");
  for (size_t i = 0; i < st.size(); ++i) check(st.end[i] >= st.start[i], "step ends before it starts");
  const auto& r = tl.cpu_ranges;
  for (size_t i = 0; i < r.size(); ++i) check(r.end[i] >= r.start[i], "range ends before it starts");
  tl.finalize();
  const auto a = chokepoint::analyses::analyze(tl);
  for (const auto& w : a.windows.steps) check(w.end >= w.start, "step window ends before it starts");
}

}  // namespace chokepoint::fuzz
