// Resolves the machine context of an analysis once, for every device of the inputs: the
// published ceilings of the GPU model, replaced by what `bench` measured when a saved
// profile for that model exists (machine/profile_store.h) or a profile is named with
// `--ceilings FILE`. The analyses then read no file and no environment.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "machine/context.h"

namespace chokepoint::pipeline {

struct CeilingsOptions {
  std::string file;            // --ceilings FILE: a profile of `bench --json` / `bench --save`
  bool saved_profiles = true;  // consult `bench --save` profiles (and $CHOKEPOINT_PROFILE)
};

// Fails only when `file` is named and cannot be read as a profile.
Result<machine::MachineContext> resolve_machine_context(const std::vector<machine::DeviceSpec>& devices,
                                                        const CeilingsOptions& o);

}  // namespace chokepoint::pipeline
