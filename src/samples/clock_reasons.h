// The bits of nvmlDeviceGetCurrentClocksEventReasons (nvml.h nvmlClocksEventReason*,
// docs/FORMATS.md "NVML and GPM"), their names and what each means: one vocabulary for the
// sampler that reads them, the analyses and rules that judge them, doctor and the reports.
// "Event" is NVML's newer word for "throttle": some bits (idle, application clocks) are
// not slowdowns at all.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace chokepoint::samples {

inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kReasonDisplayClockSetting = 0x100;
// The slowdowns proper: hardware slowdown, software and hardware thermal, power brake
// (each cuts the clocks of a busy GPU; the power cap is routine under heavy load).
inline constexpr uint64_t kSlowdownReasons = kReasonHwSlowdown | kReasonSwThermalSlowdown | kReasonHwThermalSlowdown |
                                             kReasonHwPowerBrakeSlowdown;

struct ClockEventReason {
  uint64_t bit;
  const char* name;         // stable snake_case id, used in JSON
  const char* description;  // one line for people
  bool holds_busy_clocks;   // can hold a busy GPU's clocks down (not idle, not the display)
};

std::span<const ClockEventReason> clock_event_reasons();

// Names of the set bits, lowest first; unknown bits as "0x...".
std::vector<std::string> clock_event_reason_names(uint64_t mask);

}  // namespace chokepoint::samples
