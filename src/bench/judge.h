// Judges a measured profile: sets beside each result the published (or expected)
// figure of that GPU, the percentage reached, the verdict and the likely cause when it
// is below par (machine/verdicts.h); computes the roofline ridge points. Pure: reads only
// the profile.
//
// The causes come from the rules of the one engine (rules::bench_causes, passed in by the
// caller: the rules sit above this layer), with their ids; when no rule applies, the
// judge says what usually holds that kind of test back, without an id.
#pragma once

#include "machine/profile.h"
#include "machine/verdicts.h"

namespace chokepoint::bench {

// Every cause that applies to measurement m (of testcase group `group`) of GPU g.
using CauseFinder = std::vector<machine::BenchCause> (*)(machine::BenchGroup group, const machine::Measurement& m,
                                                         const machine::GpuProfile& g, const machine::HostInfo& h);

void judge(machine::Profile& p, CauseFinder causes);

// DRAM traffic per second (read + write) the ridge points use: twice the bytes-once
// device-to-device memcpy, else twice the copy kernel, else the read kernel.
std::optional<double> measured_hbm_gbps(const machine::GpuProfile& g);

}  // namespace chokepoint::bench
