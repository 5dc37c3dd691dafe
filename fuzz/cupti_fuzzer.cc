// libFuzzer target for the CUPTI trace importer (importers/cupti; the format of
// tracer/trace_format.h). Besides crashes, hangs and memory blowups, it checks that what
// was read is consistent (parallel columns, durations not negative, steps from NVTX
// ranges inside their ranges), then runs the analyses on it, step inference included
// (a trace without annotations gets its steps from its own op sequence).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "analyses/analysis.h"
#include "importers/cupti/cupti_importer.h"

namespace {
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "cupti_fuzzer: %s\n", what);
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chokepoint::timeline::Timeline tl;
  tl.sources.emplace_back().path = "fuzz.cptrace";
  chokepoint::timeline::ImportStats stats;
  (void)chokepoint::importers::import_cupti_buffer(std::string_view(reinterpret_cast<const char*>(data), size), 0, tl,
                                                   stats);
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
  return 0;
}
