#include "report/format_util.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace chokepoint::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(FormatUtil, RoundSignificant) {
  EXPECT_EQ(round_significant(412.34567), 412.3);
  EXPECT_EQ(round_significant(3298.76), 3299.0);
  EXPECT_EQ(round_significant(0.000123456), 0.0001235);
  EXPECT_EQ(round_significant(-2.71828), -2.718);
  EXPECT_EQ(round_significant(123456789.0), 123500000.0);
  EXPECT_FALSE(std::signbit(round_significant(-0.0)));
  EXPECT_TRUE(std::isnan(round_significant(kNaN)));
}

TEST(FormatUtil, Numbers) {
  EXPECT_EQ(format_number(1234567.8), "1,234,568");
  EXPECT_EQ(format_number(-1234.0), "-1,234");
  EXPECT_EQ(format_number(259.74), "259.7");
  EXPECT_EQ(format_number(12.84), "12.8");
  EXPECT_EQ(format_number(7.934), "7.93");
  EXPECT_EQ(format_decimal(1234.56, 1), "1,234.6");
  EXPECT_EQ(format_decimal(62, 1), "62.0");
  EXPECT_EQ(column_decimals(412.3), 1);
  EXPECT_EQ(column_decimals(2.7), 2);
  EXPECT_EQ(column_decimals(0.3), 3);
  EXPECT_EQ(format_number(3), "3");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(0.012345), "0.0123");
  EXPECT_EQ(format_number(kNaN), "n/a");
  EXPECT_EQ(format_count(184220), "184,220");
  EXPECT_EQ(format_count(999), "999");
}

TEST(FormatUtil, UnitsReadTheWayPeopleWriteThem) {
  EXPECT_EQ(format_pct(63.04), "63.0%");
  EXPECT_EQ(format_pct(0.01), "<0.1%");
  EXPECT_EQ(format_pct(0), "0.0%");
  EXPECT_EQ(format_ms(259.74), "259.7 ms");
  EXPECT_EQ(format_ms(3.14159), "3.14 ms");
  EXPECT_EQ(format_ms(5), "5 ms");
  EXPECT_EQ(format_ms(12500), "12,500 ms");
  EXPECT_EQ(format_ms(0.00203), "0.00203 ms");
  EXPECT_EQ(format_ms(5.71e-05), "<0.001 ms");  // not "5.71e-05 ms"
  EXPECT_EQ(format_ms(0), "0 ms");
  EXPECT_EQ(format_seconds(1.4231), "1.42 s");
  EXPECT_EQ(format_seconds(0.35), "350 ms");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(12'913'408), "12.3 MiB");
  EXPECT_EQ(format_bytes(150'754'820'096), "140.4 GiB");
  EXPECT_EQ(format_speedup(1.049), "1.05x");
  EXPECT_EQ(format_speedup(3.14), "3.1x");
  // diff's measured ratios: 3 significant figures (issue 45).
  EXPECT_EQ(format_ratio(5.3155), "5.32x");
  EXPECT_EQ(format_ratio(13.296), "13.3x");
  EXPECT_EQ(format_ratio(0.98634), "0.986x");
  EXPECT_EQ(format_ratio(131.4), "131x");
  EXPECT_EQ(format_ratio(1.0), "1.00x");
  EXPECT_EQ(format_speedup_range(14.69, 11.61), "11.6-14.7x");  // low end first
  EXPECT_EQ(format_speedup_range(1.89, 2.217), "1.89-2.2x");
  EXPECT_EQ(format_speedup_range(3.14, 3.12), "3.1x");  // the same once rounded
  EXPECT_EQ(format_speedup_range(3.14, std::nullopt), "3.1x");
  EXPECT_EQ(format_value(12.5, "GB/s"), "12.5 GB/s");
  EXPECT_EQ(format_value(2, ""), "2");
  EXPECT_EQ(format_value(kNaN, "ms"), "n/a");
}

TEST(FormatUtil, Labels) {
  EXPECT_STREQ(category_label(rules::Category::kInput), "input (data loading)");
  EXPECT_EQ(severity_name(Severity::kCritical), "critical");
  EXPECT_EQ(humanize("launch_overhead"), "launch overhead");
}

TEST(FormatUtil, MillisecondsPerStepNeedSteps) {
  Window w;
  EXPECT_FALSE(gpu_ms_per_step(w, 50).has_value());
  w.steps = 4;
  w.analyzed_ms = 400;
  EXPECT_DOUBLE_EQ(*gpu_ms_per_step(w, 25), 25.0);
}

TEST(FormatUtil, ThresholdSaysWhichSideFires) {
  rules::Evidence e{"x", 63, 10.0, "%"};
  EXPECT_EQ(format_threshold(e), "≥ 10.0%");
  e.side = rules::ThresholdSide::kAtMost;
  EXPECT_EQ(format_threshold(e), "≤ 10.0%");
  e.side = rules::ThresholdSide::kCeiling;
  e.unit = "GB/s";
  e.threshold = 4800;
  EXPECT_EQ(format_threshold(e), "ceiling 4,800 GB/s");
  e.threshold.reset();
  EXPECT_EQ(format_threshold(e), "");
}

}  // namespace
}  // namespace chokepoint::report
