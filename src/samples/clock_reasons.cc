#include "samples/clock_reasons.h"

#include <cstdio>

namespace chokepoint::samples {
namespace {

constexpr ClockEventReason kReasons[] = {
    {kReasonGpuIdle, "gpu_idle", "nothing is running, clocks are low to save power", false},
    {kReasonApplicationsClocksSetting, "applications_clocks_setting",
     "clocks held at the applications clocks setting (nvidia-smi -ac)", true},
    {kReasonSwPowerCap, "sw_power_cap", "the power limit holds clocks down (normal under heavy load)", true},
    {kReasonHwSlowdown, "hw_slowdown",
     "hardware slowdown: clocks cut by half or more (overheating, power supply or brake signal)", true},
    {kReasonSyncBoost, "sync_boost", "clocks matched to other GPUs in a sync-boost group", true},
    {kReasonSwThermalSlowdown, "sw_thermal_slowdown", "the driver lowers clocks to keep temperature under target",
     true},
    {kReasonHwThermalSlowdown, "hw_thermal_slowdown", "hardware thermal slowdown: the GPU is too hot", true},
    {kReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown",
     "external power brake asserted (power supply or chassis asks the GPU to slow down)", true},
    {kReasonDisplayClockSetting, "display_clock_setting", "clocks limited by the display clock setting", false},
};

}  // namespace

std::span<const ClockEventReason> clock_event_reasons() { return kReasons; }

std::vector<std::string> clock_event_reason_names(uint64_t mask) {
  std::vector<std::string> out;
  uint64_t known = 0;
  for (const auto& r : kReasons) {
    known |= r.bit;
    if (mask & r.bit) out.emplace_back(r.name);
  }
  for (int b = 0; b < 64; ++b) {
    const uint64_t bit = uint64_t{1} << b;
    if ((mask & bit) && !(known & bit)) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(bit));
      out.emplace_back(buf);
    }
  }
  return out;
}

}  // namespace chokepoint::samples
