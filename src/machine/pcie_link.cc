#include "machine/pcie_link.h"

namespace chokepoint::machine {

double pcie_gbps_per_direction(unsigned gen, unsigned width) {
  static const double kPerLane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};  // GB/s
  if (gen == 0 || gen >= sizeof kPerLane / sizeof kPerLane[0]) return 0;
  return kPerLane[gen] * width;
}

}  // namespace chokepoint::machine
