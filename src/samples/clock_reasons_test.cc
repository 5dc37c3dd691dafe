#include "samples/clock_reasons.h"

#include <gtest/gtest.h>

namespace chokepoint::samples {
namespace {

TEST(ClockReasons, NamesKnownAndUnknownBits) {
  EXPECT_EQ(clock_event_reason_names(0), std::vector<std::string>{});
  EXPECT_EQ(clock_event_reason_names(kReasonSwPowerCap | kReasonHwThermalSlowdown | 0x1000),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown", "0x1000"}));
  EXPECT_EQ(clock_event_reasons().size(), 9u);
}

// Idle and the display clock setting never hold a busy GPU's clocks down; every slowdown
// proper does, and so do the power cap, sync boost and the applications clocks.
TEST(ClockReasons, WhichBitsCanHoldABusyGpu) {
  uint64_t holding = 0;
  for (const ClockEventReason& r : clock_event_reasons()) {
    if (r.holds_busy_clocks) holding |= r.bit;
  }
  EXPECT_EQ(holding & (kReasonGpuIdle | kReasonDisplayClockSetting), 0u);
  EXPECT_EQ(holding & kSlowdownReasons, kSlowdownReasons);
  EXPECT_EQ(holding, kSlowdownReasons | kReasonSwPowerCap | kReasonSyncBoost | kReasonApplicationsClocksSetting);
}

}  // namespace
}  // namespace chokepoint::samples
