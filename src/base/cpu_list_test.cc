#include "base/cpu_list.h"

#include <gtest/gtest.h>

namespace chokepoint {
namespace {

TEST(CpuList, ParsesSysfsForms) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<unsigned>{5}));
  EXPECT_EQ(parse_cpu_list("\n"), std::vector<unsigned>{}) << "an empty list is valid (memory-only node)";
  EXPECT_EQ(parse_cpu_list("3,1-2,1"), (std::vector<unsigned>{1, 2, 3}));
  EXPECT_FALSE(parse_cpu_list("0-x"));
  EXPECT_FALSE(parse_cpu_list("4-2"));
  EXPECT_FALSE(parse_cpu_list("0-4000000000")) << "garbage must not allocate billions";
}

TEST(CpuList, FormatsCompactly) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({7}), "7");
}

TEST(CpuList, Intersects) {
  EXPECT_EQ(intersect_cpus({0, 1, 2, 3}, {2, 3, 4}), (std::vector<unsigned>{2, 3}));
  EXPECT_TRUE(intersect_cpus({0, 1}, {16, 17}).empty());
}

}  // namespace
}  // namespace chokepoint
