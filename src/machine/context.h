// The machine context of an analysis: the ceilings of each GPU the inputs name and where
// they came from, and what is known of the host. Resolved once by the pipeline (published
// figures, a saved `bench` profile, or `--ceilings FILE`) and passed into the analyses,
// which read no files and no environment.
#pragma once

#include <string>
#include <vector>

#include "machine/ceilings.h"

namespace chokepoint::machine {

struct MachineContext {
  std::vector<Ceilings> devices;  // one per device of the analyzed inputs, in their order
  int cpus = 0;                   // CPUs of the host that ran the job, 0 unknown
  int loader_workers = -1;        // DataLoader workers a recording of the job saw, -1 unknown
};

// Published figures only, for every device: what tests and fuzzers analyze with.
MachineContext published_context(const std::vector<DeviceSpec>& devices);

}  // namespace chokepoint::machine
