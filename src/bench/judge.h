// Judges a measured profile: sets beside each result the published (or expected)
// figure of that GPU, the percentage reached, the verdict and the likely cause when it
// is below par; computes the roofline ridge points. Pure: reads only the profile.
#pragma once

#include "machine/profile.h"

namespace chokepoint::bench {

// Verdict strings (machine::Measurement::verdict).
inline constexpr const char* kOk = "ok";
inline constexpr const char* kBelowPar = "below par";
inline constexpr const char* kAbovePublished = "above published";
inline constexpr const char* kInfo = "info";
inline constexpr const char* kWaived = "waived";
inline constexpr const char* kFailed = "failed";

void judge(machine::Profile& p);

// DRAM traffic per second (read + write) the ridge points use: twice the bytes-once
// device-to-device memcpy, else twice the copy kernel, else the read kernel.
std::optional<double> measured_hbm_gbps(const machine::GpuProfile& g);

// Counts over all GPUs, for the summary line and the exit status.
struct VerdictCounts {
  int ok = 0, below_par = 0, above = 0, info = 0, waived = 0, failed = 0;
};
VerdictCounts count_verdicts(const machine::Profile& p);

}  // namespace chokepoint::bench
