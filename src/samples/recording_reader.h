// Reads a recording directory back into the model (docs/RECORDING.md). Bad input is
// counted, not fatal (docs/ARCHITECTURE.md convention 2): a malformed line, a line cut by a crash,
// a tick naming an undeclared series or a metric this version does not know is skipped
// and counted in `stats`; a run that never wrote its final meta.json (chokepoint was
// killed) still reads, with its processes rebuilt from the samples file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/data_loss.h"
#include "base/severity.h"
#include "base/status.h"
#include "samples/metadata.h"
#include "samples/series.h"

namespace chokepoint::samples {

// A line of samples.jsonl longer than this is skipped (counted) without being held in
// memory: the writer's longest record, a process with a 128 KiB command line escaped as
// JSON, is far below it.
inline constexpr size_t kMaxRecordingLineBytes = 4u << 20;

struct ReadStat {
  std::string name;  // stable id: "truncated_last_line", "malformed_lines" ...
  Severity severity = Severity::kInfo;
  uint64_t count = 0;
  std::string description;
};

struct Recording {
  RunMeta meta;
  bool complete = false;  // meta.json carries the end of the run
  SampleStore samples;
  uint64_t ticks = 0;
  std::vector<ReadStat> stats;  // only the ones that happened
  // What could not be used, out of how many: ticks out of order, lines that are not
  // records, GPU utilization reads that failed after the GPU had answered (GPU lost).
  std::vector<DataLoss> losses;

  const ReadStat* stat(const std::string& name) const;
};

// Fails only when `dir` holds neither meta.json nor samples.jsonl.
Result<Recording> read_recording(const std::string& dir);

}  // namespace chokepoint::samples
