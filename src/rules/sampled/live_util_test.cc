// The helpers of the sample rules.
#include "rules/sampled/live_util.h"

#include <gtest/gtest.h>

namespace chokepoint::rules::sampled {
namespace {

TEST(LiveUtil, TickShareCountsOnlyJudgedTicks) {
  const std::vector<int64_t> ticks = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  // Tick 0 cannot be judged; 4 of the other 8 hold.
  const auto share = tick_share(ticks, [](int64_t t) -> std::optional<bool> {
    if (t == 0) return std::nullopt;
    return t % 2 == 0;
  });
  EXPECT_DOUBLE_EQ(*share, 4.0 / 8);
  // Fewer than five judged ticks (a 2 ms run has one or two) give no share at all.
  EXPECT_FALSE(tick_share(std::vector<int64_t>{0, 1, 2, 3}, [](int64_t) -> std::optional<bool> { return true; }));
  EXPECT_FALSE(tick_share(ticks, [](int64_t) -> std::optional<bool> { return std::nullopt; }));
  EXPECT_FALSE(tick_share({}, [](int64_t) -> std::optional<bool> { return true; }));
}

TEST(LiveUtil, PcieCeilingFromSampledLink) {
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(5, 16), 3.938 * 16);
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(4, 8), 1.969 * 8);
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(0, 16), 0);
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(9, 16), 0);
  EXPECT_DOUBLE_EQ(pcie_gbps_per_direction(5, 0), 0);
}

}  // namespace
}  // namespace chokepoint::rules::sampled
