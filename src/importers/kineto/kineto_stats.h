// The import stats the Kineto importer may raise (docs/ARCHITECTURE.md convention 2: bad input is
// counted, not fatal), each one of the catalogue's (base/stat_catalogue.h). Counted
// locally while reading, so the hot path never touches the central ImportStats list, and
// flushed once at the end.
#pragma once

#include <array>
#include <cstdint>

#include "timeline/import_stats.h"

namespace chokepoint::importers::kineto {

enum class Stat : uint8_t {
  kEventsIgnored,     // flows, counters, instants, Trace spans, other metadata
  kNonNumericPid,     // pid/tid given as a string ("Spans")
  kMalformedEvent,    // element that is not valid JSON; skipped
  kNonObjectEvent,    // element of traceEvents that is not an object
  kInvalidUtf8,       // invalid UTF-8 replaced by '?'
  kBadNumber,         // a numeric field that is not a number (bare N/A, "", ...)
  kIntOverflow,       // an integer field beyond int64
  kIdOutOfRange,      // pid/tid/device/stream/id beyond the model's integer width
  kMissingTimestamp,  // X event without a readable ts: skipped
  kMissingDuration,   // X event without a readable dur: zero length
  kNegativeDuration,  // clamped to zero
  kDuplicateKey,      // a key repeated inside one event: the last value wins
  kTruncated,         // the file ends in the middle of the trace
  kGzipCorrupt,       // the gzip stream ends early or is corrupt
  kEmptyTrace,        // traceEvents is empty
  kNoSteps,           // no ProfilerStep#N annotation
  kUnknownDevice,     // GPU events on a device absent from deviceProperties
  kBadMetadata,       // unreadable top-level member (deviceProperties, ...)
  kNoBaseTime,        // no baseTimeNanoseconds: times stay on the trace's own clock
  kEventsCut,         // the file ends inside traceEvents (the GPU work and API calls come last)
  kCount
};

// The catalogue's entry of `s`.
StatId stat_id(Stat s);

class StatCounter {
 public:
  void add(Stat s, int64_t n = 1) { counts_[static_cast<size_t>(s)] += n; }
  int64_t count(Stat s) const { return counts_[static_cast<size_t>(s)]; }
  // Adds the non-zero counters to `stats`.
  void flush_to(timeline::ImportStats& stats) const;

 private:
  std::array<int64_t, static_cast<size_t>(Stat::kCount)> counts_{};
};

}  // namespace chokepoint::importers::kineto
