// Judges a measured profile: sets beside each result the published (or expected)
// figure of that GPU, the percentage reached, the verdict and the likely cause when it
// is below par (machine/verdicts.h); computes the roofline ridge points. Pure: reads only
// the profile.
#pragma once

#include "machine/profile.h"
#include "machine/verdicts.h"

namespace chokepoint::bench {

void judge(machine::Profile& p);

// DRAM traffic per second (read + write) the ridge points use: twice the bytes-once
// device-to-device memcpy, else twice the copy kernel, else the read kernel.
std::optional<double> measured_hbm_gbps(const machine::GpuProfile& g);

}  // namespace chokepoint::bench
