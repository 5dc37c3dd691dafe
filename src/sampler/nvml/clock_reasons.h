// Names for the bits of nvmlDeviceGetCurrentClocksEventReasons (nvml.h
// nvmlClocksEventReason*, docs/FORMATS.md "NVML and GPM"). "Event" is NVML's newer word for
// "throttle": some bits (idle, application clocks) are not slowdowns at all.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace chokepoint::nvml {

inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kReasonDisplayClockSetting = 0x100;

struct ClockEventReason {
  uint64_t bit;
  const char* name;         // stable snake_case id, used in JSON
  const char* description;  // one line for people
};

std::span<const ClockEventReason> clock_event_reasons();

// Names of the set bits, lowest first; unknown bits as "0x...".
std::vector<std::string> clock_event_reason_names(uint64_t mask);

}  // namespace chokepoint::nvml
