// The two clocks of a sampling tick: CLOCK_REALTIME stamps the record (it lines up with
// CUPTI and Kineto timestamps of the same run); CLOCK_MONOTONIC measures the deltas that
// rates divide by (it never jumps when NTP steps the wall clock). Backends take a
// TickTime instead of reading clocks, so tests drive time exactly.
#pragma once

#include <time.h>

#include <cstdint>

namespace chokepoint::samples {

struct TickTime {
  int64_t realtime_ns = 0;
  int64_t monotonic_ns = 0;
};

inline int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline TickTime now() { return {clock_ns(CLOCK_REALTIME), clock_ns(CLOCK_MONOTONIC)}; }

}  // namespace chokepoint::samples
