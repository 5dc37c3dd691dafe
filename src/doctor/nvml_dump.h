// `chokepoint doctor --dump-nvml` (hidden): every NVML value chokepoint reads, raw, with
// its validity and NVML code, the symbol each slot bound to, and plausibility checks
// that catch a wrong struct layout (a bus id string that disagrees with the numeric
// fields, memory parts that do not add up, v1 and v2 memory that disagree, GPM
// percentages outside 0-100 ...). One run on a GPU machine validates every declaration
// in sampler/nvml/nvml_abi.h against the real driver.
#pragma once

#include <ostream>

#include "sampler/nvml/nvml.h"

namespace chokepoint::doctor {

// Returns 0 when NVML loaded and every plausibility check passed, 1 when one failed,
// 2 when NVML could not be opened.
int dump_nvml(const nvml::OpenOptions& options, std::ostream& out);

}  // namespace chokepoint::doctor
