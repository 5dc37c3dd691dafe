// What a reading of NVML can be on any GPU: a value outside its range is not a reading
// (a lost GPU, a sentinel such as 0xFFFFFFFF or -1, a struct read with the wrong layout)
// and becomes invalid (kOutOfRange), so a report never prints "util 250%" or
// "4294967295 MHz". Generous bounds: a real GPU is far inside each.
#pragma once

#include <cstdint>

namespace chokepoint::nvml::range {

inline constexpr unsigned kPctMax = 100;  // utilization, GPM activity %
inline constexpr unsigned kClockMhzMin = 1, kClockMhzMax = 10'000;
inline constexpr unsigned kPowerMwMax = 5'000'000;  // 5000 W
inline constexpr int kTemperatureCMin = -50, kTemperatureCMax = 200;
inline constexpr int kTemperatureSentinel = -1;  // what a failed read gives
inline constexpr unsigned kPcieGenMin = 1, kPcieGenMax = 16;
inline constexpr unsigned kPcieWidthMin = 1, kPcieWidthMax = 64;
inline constexpr double kPcieBytesPerSMax = 1e12;                                          // below 1 TB/s
inline constexpr unsigned kPcieKBpsMax = static_cast<unsigned>(kPcieBytesPerSMax / 1024);  // NVML: KB/s
inline constexpr double kPcieMiBpsMax = kPcieBytesPerSMax / (1024.0 * 1024.0);             // GPM: MiB/s

}  // namespace chokepoint::nvml::range
