#include "pipeline/input_plan.h"

#include <algorithm>
#include <filesystem>

#include "importers/importer.h"
#include "importers/input/byte_source.h"
#include "importers/input/same_content.h"
#include "pipeline/inputs.h"
#include "pipeline/rank_inputs.h"

namespace chokepoint::pipeline {
namespace fs = std::filesystem;

namespace {

// The trace files of a path that is no recording: itself, or the recognized files of a
// directory by name, one of each content (a copy under another name is not another rank;
// the import says which it left out).
std::vector<std::string> trace_files(const std::string& path) {
  const auto importers = importers::all_importers();
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    // The error_code form: a symbolic link loop in the directory is skipped here (the
    // import names it), not thrown as an internal error (issue 47).
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && importers::is_trace_file_name(importers, it->path().filename().string()))
      files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return importers::distinct_contents(files);
}

}  // namespace

const PlannedPath* InputPlan::recording() const {
  for (const PlannedPath& p : paths) {
    if (p.is_recording) return &p;
  }
  return nullptr;
}

InputPlan plan_inputs(const std::vector<std::string>& paths) {
  InputPlan plan;
  for (const std::string& path : paths) {
    PlannedPath pp;
    pp.path = path;
    pp.is_recording = is_recording_dir(path);
    if (pp.is_recording) {
      auto rec = samples::read_recording(path);
      if (rec.ok()) pp.recording = std::move(rec).value();
      pp.trace_files = recording_trace_files(path);
    } else {
      pp.trace_files = trace_files(path);
    }
    for (const std::string& f : pp.trace_files) {
      if (plan.heads.count(f) > 0) continue;
      auto head = importers::read_head(f, kRankHeadBytes);
      if (!head.ok()) continue;  // the import says why, naming the file
      plan.ranks[f] = rank_in_head(head.value());
      if (head.value().size() > kSniffHeadBytes) head.value().resize(kSniffHeadBytes);
      plan.heads[f] = std::move(head).value();
    }
    plan.paths.push_back(std::move(pp));
  }
  return plan;
}

}  // namespace chokepoint::pipeline
