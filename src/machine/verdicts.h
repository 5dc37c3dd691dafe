// The verdicts of a judged profile (machine::Measurement::verdict): the vocabulary that
// bench's judgement (bench/judge.h) writes and the bench view (report/bench_render.h)
// and the exit status of `bench` read, kept here, beneath both.
#pragma once

#include "machine/profile.h"

namespace chokepoint::machine {

inline constexpr const char* kVerdictOk = "ok";
inline constexpr const char* kVerdictBelowPar = "below par";
inline constexpr const char* kVerdictAbovePublished = "above published";
inline constexpr const char* kVerdictInfo = "info";
inline constexpr const char* kVerdictWaived = "waived";
inline constexpr const char* kVerdictFailed = "failed";

// Counts over all GPUs, for the summary line and the exit status.
struct VerdictCounts {
  int ok = 0, below_par = 0, above = 0, info = 0, waived = 0, failed = 0;
};
VerdictCounts count_verdicts(const Profile& p);

}  // namespace chokepoint::machine
