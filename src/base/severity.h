// The one severity vocabulary: findings, doctor checks, import and recording stats all
// say how much something matters in these three words.
//   critical  fix this first: it costs the most step time (a finding whose remedy promises
//             >= 1.5x), breaks the job (a failed doctor check), or makes the input unusable
//   warning   worth a look: a real cost (>= 1.1x), a setting that will hurt, damaged data
//             that was skipped
//   info      context: true, but not what limits the run now
#pragma once

#include <cstdint>
#include <string_view>

namespace chokepoint {

enum class Severity : uint8_t { kInfo, kWarning, kCritical };

constexpr std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "info";
}

}  // namespace chokepoint
