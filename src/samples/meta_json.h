// JSON forms of the recording metadata (docs/RECORDING.md): meta.json and the
// "process" lines of the samples file share ProcessMeta's form.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "samples/metadata.h"

namespace chokepoint::samples {

nlohmann::json process_to_json(const ProcessMeta& p);
// Missing keys keep their defaults; false when the object is not a process. Keys present
// with a value of the wrong type keep their defaults too, and are named in `unreadable`.
bool process_from_json(const nlohmann::json& j, ProcessMeta* out, std::vector<std::string>* unreadable = nullptr);

nlohmann::json run_meta_to_json(const RunMeta& meta);
// Tolerant: unknown keys are ignored, missing ones keep their defaults. False when `j`
// is not an object or has no format_version. Keys of the wrong type keep their defaults
// and are named in `unreadable` ("interval_ns", "gpus[].index").
bool run_meta_from_json(const nlohmann::json& j, RunMeta* out, std::vector<std::string>* unreadable = nullptr);

}  // namespace chokepoint::samples
