#include "importers/kineto/kineto_stats.h"

namespace chokepoint::importers::kineto {
namespace {


constexpr StatInfo kStats[] = {
    {"kineto_events_ignored", Severity::kInfo,
     "Events without a place in the model (flows, counters, instants, Trace spans, sort "
     "metadata) were skipped."},
    {"kineto_non_numeric_pid", Severity::kInfo,
     "Events whose pid or tid is missing or a string (\"Spans\") rather than a process/thread "
     "or device/stream id were skipped."},
    {"kineto_malformed_event", Severity::kWarning,
     "Events that are not valid JSON (bad escapes, unescaped quotes or control characters) "
     "were skipped; reading resumed at the next event."},
    {"kineto_non_object_event", Severity::kWarning,
     "Elements of traceEvents that are not JSON objects were skipped."},
    {"kineto_invalid_utf8", Severity::kInfo,
     "Events containing invalid UTF-8 were kept with the invalid bytes replaced by '?'."},
    {"kineto_bad_number", Severity::kWarning,
     "Numeric fields holding something else (bare N/A, empty strings) were treated as "
     "unknown."},
    {"kineto_int_overflow", Severity::kInfo,
     "Integer fields beyond the 64-bit range were treated as unknown."},
    {"kineto_id_out_of_range", Severity::kInfo,
     "Ids too wide for the model (pid/tid beyond 32 bits, odd device or stream ids) were "
     "folded or treated as unknown."},
    {"kineto_missing_timestamp", Severity::kWarning,
     "Events without a readable ts were skipped."},
    {"kineto_missing_duration", Severity::kWarning,
     "Complete events without a readable dur were given zero duration."},
    {"kineto_negative_duration", Severity::kWarning,
     "Events with a negative duration were given zero duration."},
    {"kineto_duplicate_key", Severity::kInfo,
     "Events repeating a key kept its last value."},
    {"kineto_truncated", Severity::kWarning,
     "The trace ends in the middle of the data (cut-off file); all complete events before "
     "that point were kept."},
    {"kineto_gzip_corrupt", Severity::kWarning,
     "The gzip stream ended early or is corrupt; only the data decoded before that point "
     "was read."},
    {"kineto_empty_trace", Severity::kWarning, "The trace's traceEvents array is empty."},
    {"kineto_no_steps", Severity::kWarning,
     "The trace has no ProfilerStep#N annotations (profiler not driven by prof.step()); "
     "steps must be inferred."},
    {"kineto_unknown_device", Severity::kWarning,
     "GPU events ran on devices absent from deviceProperties, so those devices have no "
     "name or limits."},
    {"kineto_bad_metadata", Severity::kWarning,
     "A top-level member (deviceProperties, distributedInfo, baseTimeNanoseconds or the "
     "object around traceEvents) could not be read."},
    {"kineto_no_base_time", Severity::kInfo,
     "The trace has no baseTimeNanoseconds (an older profiler, or a file cut off before "
     "it), so its times may not line up with other ranks' traces."},
};
static_assert(sizeof(kStats) / sizeof(kStats[0]) == static_cast<size_t>(Stat::kCount));

}  // namespace

const StatInfo& stat_info(Stat s) { return kStats[static_cast<size_t>(s)]; }

void StatCounter::flush_to(timeline::ImportStats& stats) const {
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) {
      stats.add(kStats[i].name, kStats[i].severity, kStats[i].description, counts_[i]);
    }
  }
}

}  // namespace chokepoint::importers::kineto
