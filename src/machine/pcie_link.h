// The raw bandwidth of a PCIe link: per lane and direction after line coding (PCI-SIG:
// 2.5/5 GT/s with 8b/10b, 8/16/32 GT/s with 128b/130b, 64 GT/s PAM4 with FLIT). What a
// copy achieves is lower (about 55 GB/s pinned on the H200's Gen5 x16, docs/BENCHMARKS.md).
#pragma once

namespace chokepoint::machine {

// GB/s per direction for `width` lanes of generation `gen`; 0 when gen is unknown.
double pcie_gbps_per_direction(unsigned gen, unsigned width);

}  // namespace chokepoint::machine
