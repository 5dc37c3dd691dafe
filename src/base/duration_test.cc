#include "base/duration.h"

#include <gtest/gtest.h>

namespace chokepoint {
namespace {

TEST(Duration, UnitsAndBareSeconds) {
  EXPECT_EQ(parse_duration_ns("100ms"), 100'000'000);
  EXPECT_EQ(parse_duration_ns("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration_ns("2"), 2'000'000'000);
  EXPECT_EQ(parse_duration_ns("250us"), 250'000);
  EXPECT_EQ(parse_duration_ns("2m"), 120'000'000'000);
  EXPECT_EQ(parse_duration_ns("3min"), 180'000'000'000);
  EXPECT_EQ(parse_duration_ns("1h"), 3'600'000'000'000);
}

TEST(Duration, WhatIsNotAPositiveDuration) {
  for (const char* bad : {"", "s", "0s", "-1s", "10 s", "5d", "1e30h", "nan", "fast"}) {
    EXPECT_FALSE(parse_duration_ns(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace chokepoint
