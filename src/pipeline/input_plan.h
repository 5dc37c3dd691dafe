// What `analyze` was given, worked out once: each path classified (a recording of `run`, a
// directory of traces, a trace file), each recording parsed, each directory's trace files
// listed, each trace file's head read. The rank grouping (rank_inputs.h) and the import
// (inputs.h) both read the plan; nothing classifies, sniffs or parses an input twice.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "samples/recording_reader.h"

namespace chokepoint::pipeline {

struct PlannedPath {
  std::string path;  // as given
  // A recording directory: its samples and metadata, parsed (nullopt when `path` is not
  // one, or when it is one that does not read: the import then says why).
  bool is_recording = false;
  std::optional<samples::Recording> recording;
  // The trace files it stands for, sorted: the file itself, a directory's recognized
  // trace files (one of each content), a recording's CUPTI traces.
  std::vector<std::string> trace_files;
};

struct InputPlan {
  std::vector<PlannedPath> paths;
  // The first bytes (up to kSniffHeadBytes, decompressed) of every trace file of `paths`
  // that could be read, which the importers sniff (importers::ImportOptions::heads), and
  // the rank its head names (distributedInfo, within kRankHeadBytes), -1 none.
  std::map<std::string, std::string> heads;
  std::map<std::string, int32_t> ranks;
  // The one recording among the inputs, when there is one.
  const PlannedPath* recording() const;
};

// torch.profiler writes distributedInfo before traceEvents, after deviceProperties (a few
// KiB per GPU): this much of each head holds it. The importers sniff the first 64 KiB.
inline constexpr size_t kRankHeadBytes = 256 * 1024;
inline constexpr size_t kSniffHeadBytes = 64 * 1024;

InputPlan plan_inputs(const std::vector<std::string>& paths);

}  // namespace chokepoint::pipeline
