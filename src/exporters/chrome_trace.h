// Chrome trace-event JSON export (`chokepoint analyze --format chrome`): the timeline, the
// step windows and the sampled counters of a run in one file that ui.perfetto.dev and
// chrome://tracing open, so that a finding can be checked against the events behind it.
//
// Layout (after the PyTorch profiler's own traces, so the two read alike):
// - CPU ranges, CUDA API calls and sync records on their real process and thread;
// - GPU ops and GPU annotations on one synthetic process per device, one thread per
//   stream, with a flow arrow ("ac2g") from each launching API call to its GPU op;
// - step windows on a synthetic "Steps" process;
// - sampled metrics as counters ("C"): GPU metrics on the GPU's process, host metrics on
//   a synthetic "Host" process, process and thread metrics on the real process;
// - where the findings are (ChromeFindingTracks, given by the caller: the exporter knows no
//   verdicts): on each GPU's process an "idle by cause" thread of the GPU's idle gaps,
//   each named by its cause, and a "findings" thread of instant markers, one per finding
//   instance.
// Times are µs relative to otherData.base_time_ns (the earliest time written), with
// three decimals so that nanoseconds survive.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "analyses/idle_gaps.h"
#include "analyses/steps.h"
#include "base/status.h"
#include "samples/recording_reader.h"
#include "timeline/model.h"

namespace chokepoint::exporters {

// Synthetic pids. Linux pids never exceed PID_MAX_LIMIT (2^22), and viewers read pids as
// unsigned 32-bit, so these sit above the one and below the other.
inline constexpr int64_t kChromeStepsPid = int64_t{1} << 28;
inline constexpr int64_t kChromeHostPid = kChromeStepsPid + 1;
// + Timeline::devices index.
inline constexpr int64_t kChromeGpuPidBase = kChromeStepsPid + 0x100;
// + NVML index, for a sampled GPU that no timeline device can be matched to.
inline constexpr int64_t kChromeSampledGpuPidBase = kChromeGpuPidBase + 0x10000;

// Synthetic threads on each GPU's process, above any CUDA stream id seen in practice.
inline constexpr int64_t kChromeIdleTid = int64_t{1} << 29;
inline constexpr int64_t kChromeFindingsTid = kChromeIdleTid + 1;

// One instance of a finding in the timeline: where to look.
struct ChromeMarker {
  timeline::TimeNs ts = 0;
  timeline::TimeNs span_ns = 0;  // the instance's length (a gap, a kernel)
  int32_t device = 0;            // Timeline::devices index: on that GPU's findings thread
  std::string finding;           // id ("host-sync")
  std::string title;
  std::string severity;
  std::string what;  // "longest sync gap of step 5"
};

struct ChromeFindingTracks {
  std::vector<analyses::IdleGap> idle;
  std::vector<ChromeMarker> markers;
};

// What was written, for messages and tests.
struct ChromeTraceStats {
  int64_t slices = 0;           // "X" events
  int64_t flows = 0;            // launch -> GPU op arrows (each one "s" and one "f")
  int64_t counters = 0;         // "C" events
  int64_t metadata = 0;         // "M" events
  int64_t invalid_samples = 0;  // samples without a value: left out, never written as 0
  int64_t unplaced = 0;         // sync records with neither a thread nor a device: left out
  int64_t idle_gaps = 0;        // "X" events of the idle-by-cause threads (among slices)
  int64_t markers = 0;          // "i" events: finding instances
  int64_t base_time_ns = 0;
};

// Writes the trace to `out` as it goes (no document is built in memory, whatever the
// size of the timeline). `rec` (the samples of a recording), `steps` and `findings` may be
// null. Fails only when `out` fails.
Status write_chrome_trace(const timeline::Timeline& tl, const samples::Recording* rec,
                          const analyses::StepWindows* steps, std::ostream& out, ChromeTraceStats* stats = nullptr,
                          const ChromeFindingTracks* findings = nullptr);

}  // namespace chokepoint::exporters
