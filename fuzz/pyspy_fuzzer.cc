// libFuzzer target for the Python stack importer (py-spy's chrometrace output, read back
// from a recording: importers/pyspy/) followed by what reads stacks: the host hot spots
// over idle cells made from the input's own times, and the stack classification. Besides
// crashes, hangs and memory blowups it checks that the model is consistent: segments
// sorted per thread, positive and inside their stacks' bounds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "analyses/stacks/hotspots.h"
#include "importers/pyspy/pyspy_reader.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "pyspy_fuzzer: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = chokepoint::importers::parse_pyspy_chrometrace(text, 1'000'000'000);
  if (!r.ok()) return 0;
  const chokepoint::samples::PyStacks& s = r.value();
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < s.segments.size(); ++i) {
    const auto& g = s.segments[i];
    check(g.thread >= 0 && static_cast<size_t>(g.thread) < s.threads.size(), "segment thread out of range");
    check(g.stack >= 0 && static_cast<size_t>(g.stack) < s.stacks.size(), "segment stack out of range");
    check(g.end_ns > g.start_ns, "empty or reversed segment");
    if (i > 0) {
      const auto& p = s.segments[i - 1];
      check(p.thread < g.thread || (p.thread == g.thread && p.end_ns <= g.start_ns), "segments overlap or unsorted");
    }
    for (int32_t f : s.stacks[g.stack]) check(f >= 0 && static_cast<size_t>(f) < s.frames.size(), "frame out of range");
    lo = std::min(lo, g.start_ns);
    hi = std::max(hi, g.end_ns);
  }
  if (s.segments.empty()) return 0;
  // Idle cells over the input's span: a half-idle first half, a wholly idle second half.
  chokepoint::analyses::AttributionInput in;
  in.stacks = &s;
  in.window_start_ns = lo;
  in.window_end_ns = hi;
  const int64_t mid = lo + (hi - lo) / 2;
  in.idle = {{lo, mid, 0.5}, {mid, hi, 1.0}};
  const auto a = chokepoint::analyses::attribute_host_time(in);
  check(a.covered_idle_s <= a.gpu_idle_s * (1 + 1e-9) + 1e-9 || a.thread.find(',') != std::string::npos,
        "more idle time covered than there was (one launching thread)");
  double sum = 0;
  for (const auto& h : a.spots) {
    check(h.idle_s >= 0 && h.on_thread_s >= 0, "negative time");
    sum += h.idle_s;
  }
  check(sum <= a.covered_idle_s * (1 + 1e-9) + 1e-9, "spots hold more idle time than covered");
  return 0;
}
