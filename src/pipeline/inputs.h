// What `analyze` reads, loaded once for any output (the report or the trace export):
// Kineto or CUPTI trace files and directories of them, or one recording directory of
// `chokepoint run` (its samples, plus the *.cptrace files `run --trace` wrote beside them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "importers/importer.h"
#include "pipeline/input_plan.h"
#include "samples/recording_reader.h"
#include "samples/stacks.h"
#include "timeline/import_stats.h"
#include "timeline/model.h"

namespace chokepoint::pipeline {

struct Inputs {
  // Set for a recording directory (then the only input).
  std::optional<samples::Recording> recording;
  std::string recording_dir;
  // The traces, finalized: the named files, or the recording's trace files. Empty for a
  // recording without any, and for one whose trace files could not be read.
  timeline::Timeline tl;
  timeline::ImportStats stats;
  // Recording only: the trace files found, and why they could not be read (ok when they
  // could, or when there were none). A bad trace never hides the samples.
  std::vector<std::string> trace_files;
  Status trace_status;
  // Recording only: the Python stacks sampled during the run (meta.json's "stacks"), and
  // why they could not be read ("" when they could or there were none).
  std::optional<samples::PyStacks> stacks;
  std::string stacks_problem;
  // Bursts of fast samples (meta.json's "stacks.bursts"), each on its own: they count the
  // job's iterations when nothing else does.
  std::vector<samples::PyStacks> stack_bursts;
};

// True when `path` is a directory holding a recording (meta.json or samples.jsonl of
// docs/RECORDING.md).
bool is_recording_dir(const std::string& path);

// The CUPTI tracer's files in recording directory `dir`, sorted by name.
std::vector<std::string> recording_trace_files(const std::string& dir);

// A py-spy file of recording `dir` (a name meta.json gives: inside `dir`, read plain or
// as FILE.gz).
Result<samples::PyStacks> read_stack_file(const std::string& dir, const std::string& file, int64_t origin_ns);

// Reads recording directory `dir` and its trace files. Fails only when `dir` holds no
// recording (samples::read_recording).
Result<Inputs> load_recording(const std::string& dir, const importers::ImportOptions& opts = {});

// Reads the inputs of `plan` (input_plan.h: nothing it classified, sniffed or parsed is
// done again). Fails when nothing could be read, when a trace file is not recognized (see
// importers::import_paths), or when a recording is given together with other inputs.
Result<Inputs> load_inputs(InputPlan plan, const importers::ImportOptions& opts = {});
// The same, planned here.
Result<Inputs> load_inputs(const std::vector<std::string>& paths, const importers::ImportOptions& opts = {});

}  // namespace chokepoint::pipeline
