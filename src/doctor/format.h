// Small text helpers shared by the checks and the renderers.
#pragma once

#include "machine/pcie_link.h"

#include <cstdint>
#include <string>

namespace chokepoint::doctor {

// 1536 MiB -> "1.5 GiB"; binary units, because that is how memory and tmpfs are sized.
std::string format_bytes(uint64_t bytes);

using machine::pcie_gbps_per_direction;  // machine/pcie_link.h

}  // namespace chokepoint::doctor
