// Golden tests analyze with the published ceilings only: a `chokepoint bench --save`
// profile on the machine running them must not move the expected figures. It is passed as
// an option (CeilingsOptions::saved_profiles), never through $CHOKEPOINT_PROFILE: the
// process's environment is every test's, including those of the profile lookup itself.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/analyze_pipeline.h"
#include "pipeline/live_report.h"

namespace chokepoint::golden {

inline pipeline::AnalyzeOptions published_ceilings() {
  pipeline::AnalyzeOptions ao;
  ao.ceilings.saved_profiles = false;
  return ao;
}

// pipeline::analyze_paths with the published ceilings.
inline Result<report::Report> analyze_fixture(const std::vector<std::string>& paths,
                                              const importers::ImportOptions& io = {}) {
  return pipeline::analyze_paths(paths, io, published_ceilings());
}

// pipeline::analyze_recording_dir with the published ceilings.
inline Result<report::Report> analyze_fixture_dir(const std::string& dir) {
  return pipeline::analyze_recording_dir(dir, published_ceilings());
}

// tests/data/pairs/: the before/after pairs of docs/VALIDATION.md.
inline const std::string kPairsDir = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/";

// A JSON file of the fixtures (expected.json, measured.json ...).
inline nlohmann::json load_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

}  // namespace chokepoint::golden
