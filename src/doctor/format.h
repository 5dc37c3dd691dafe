// Small text helpers shared by the checks and the renderers.
#pragma once

#include <cstdint>
#include <string>

namespace chokepoint::doctor {

// 1536 MiB -> "1.5 GiB"; binary units, because that is how memory and tmpfs are sized.
std::string format_bytes(uint64_t bytes);

// PCIe bandwidth per direction of a link, GB/s (1e9 B/s), after line encoding.
// Gen1/2 use 8b/10b, Gen3-5 128b/130b, Gen6 FLIT mode (PCI-SIG figures; REFERENCE.md
// section 9 quotes the x16 values 15.8 / 31.5 / 63). 0 for an unknown generation.
double pcie_gbps_per_direction(unsigned gen, unsigned width);

}  // namespace chokepoint::doctor
