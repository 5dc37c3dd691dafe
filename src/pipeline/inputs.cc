#include "pipeline/inputs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/read_file.h"
#include "importers/pyspy/pyspy_reader.h"
#include "samples/recording_writer.h"
#include "tracer/trace_format.h"

namespace chokepoint::pipeline {
namespace fs = std::filesystem;

bool is_recording_dir(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return false;
  if (fs::exists(fs::path(path) / samples::kSamplesFile, ec) ||
      fs::exists(fs::path(path) / samples::kSamplesGzFile, ec)) {
    return true;
  }
  // meta.json alone (a run killed before its first tick): only ours, by its format key.
  const Result<std::string> meta = read_regular_file((fs::path(path) / samples::kMetaFile).string());
  return meta.ok() && meta.value().find("\"chokepoint.recording\"") != std::string::npos;
}

std::vector<std::string> recording_trace_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string gz = std::string(tracer::kTraceFileSuffix) + ".gz";
    const bool trace = name.ends_with(tracer::kTraceFileSuffix) || name.ends_with(gz);  // .gz: kept small
    if (trace) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The source lines py-spy's stacks name, from the recording's sources file (a JSON object
// of strings); an unreadable file adds none.
void read_source_lines(const std::string& dir, const std::string& sources_file, samples::PyStacks& stacks) {
  const Result<std::string> f = read_regular_file((fs::path(dir) / sources_file).string());
  const auto j = f.ok() ? nlohmann::json::parse(f.value(), nullptr, /*allow_exceptions=*/false) : nlohmann::json();
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) stacks.source_lines[k] = v.get<std::string>();
  }
}

// The Python stacks meta.json names, into in.stacks, or why not into in.stacks_problem.
void load_stacks(const std::string& dir, const samples::StacksMeta& sm, Inputs& in) {
  // `run` takes one a minute: a day's worth at most, each file once, at a rate py-spy can
  // have sampled at (meta.json is input like any other).
  constexpr size_t kMaxBursts = 1440;
  std::set<std::string> seen;
  for (const auto& b : sm.bursts) {
    if (in.stack_bursts.size() >= kMaxBursts || !seen.insert(b.file).second) continue;
    if (!std::isfinite(b.rate_hz) || b.rate_hz <= 0 || b.rate_hz > 100'000) continue;
    auto bs = read_stack_file(dir, b.file, b.origin_ns);
    if (!bs.ok()) continue;  // a burst is an extra: the run's own samples still count
    in.stack_bursts.push_back(std::move(bs).value());
    in.stack_bursts.back().source = sm.tool;
    in.stack_bursts.back().rate_hz = b.rate_hz;
  }
  auto st = read_stack_file(dir, sm.file, sm.origin_ns);
  if (!st.ok()) {
    in.stacks_problem = st.status().message();
    return;
  }
  in.stacks = std::move(st).value();
  in.stacks->source = sm.tool;
  in.stacks->rate_hz = sm.rate_hz;
  in.stacks->idle_included = true;
  if (!sm.sources_file.empty() && sm.sources_file.find('/') == std::string::npos) {
    read_source_lines(dir, sm.sources_file, *in.stacks);
  }
}

}  // namespace

// Names from meta.json stay inside the recording directory; gzipped to keep (fixtures,
// archives): the same file with .gz.
Result<samples::PyStacks> read_stack_file(const std::string& dir, const std::string& file, int64_t origin_ns) {
  const bool plain = file.find('/') == std::string::npos && file != "." && file != "..";
  if (!plain) return Status::Error("stack file name " + file + " is not in the recording");
  std::string path = (fs::path(dir) / file).string();
  std::error_code ec;
  if (!fs::exists(path, ec) && fs::exists(path + ".gz", ec)) path += ".gz";
  return importers::read_pyspy_chrometrace(path, origin_ns);
}

namespace {

// A recording already parsed, with its trace files (importers::ImportOptions::heads may
// hold their heads) and its Python stacks.
Inputs load_parsed_recording(const std::string& dir, samples::Recording rec, std::vector<std::string> trace_files,
                             const importers::ImportOptions& opts) {
  Inputs in;
  in.recording = std::move(rec);
  in.recording_dir = dir;
  in.trace_files = std::move(trace_files);
  if (!in.trace_files.empty()) {
    in.trace_status = importers::import_paths(in.trace_files, in.tl, in.stats, opts);
    // Half a timeline from a failed import would pass for the whole run.
    if (!in.trace_status.ok()) in.tl = timeline::Timeline{};
  }
  const samples::StacksMeta& sm = in.recording->meta.stacks;
  if (!sm.file.empty()) load_stacks(dir, sm, in);
  return in;
}

}  // namespace

Result<Inputs> load_recording(const std::string& dir, const importers::ImportOptions& opts) {
  auto rec = samples::read_recording(dir);
  if (!rec.ok()) return rec.status();
  return load_parsed_recording(dir, std::move(rec).value(), recording_trace_files(dir), opts);
}

Result<Inputs> load_inputs(InputPlan plan, const importers::ImportOptions& opts) {
  importers::ImportOptions with_heads = opts;
  with_heads.heads = &plan.heads;  // sniffed once, by the plan
  for (PlannedPath& p : plan.paths) {
    if (!p.is_recording) continue;
    if (plan.paths.size() > 1) {
      return Status::Error(
          ErrorCode::kInput,
          p.path + " is a chokepoint recording: analyze it on its own, not together with other inputs");
    }
    if (!p.recording) return samples::read_recording(p.path).status();  // why it does not read
    return load_parsed_recording(p.path, std::move(*p.recording), std::move(p.trace_files), with_heads);
  }
  std::vector<std::string> paths;
  for (const PlannedPath& p : plan.paths) paths.push_back(p.path);
  Inputs in;
  Status s = importers::import_paths(paths, in.tl, in.stats, with_heads);
  if (!s.ok()) return s;
  return in;
}

Result<Inputs> load_inputs(const std::vector<std::string>& paths, const importers::ImportOptions& opts) {
  return load_inputs(plan_inputs(paths), opts);
}

}  // namespace chokepoint::pipeline
