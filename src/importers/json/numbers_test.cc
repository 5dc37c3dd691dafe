#include "importers/json/numbers.h"

#include <gtest/gtest.h>

namespace chokepoint::importers::json {
namespace {

int64_t ns(std::string_view t) {
  int64_t v = 0;
  EXPECT_EQ(parse_us_as_ns(t, &v), NumberStatus::kOk) << t;
  return v;
}

TEST(Numbers, KinetoTimestampsAreExact) {
  // 16 significant digits: a double would land on ...172.27299 or ...172.27301.
  EXPECT_EQ(ns("5105435920172.273"), 5105435920172273);
  EXPECT_EQ(ns("5105435920376.839"), 5105435920376839);
  EXPECT_EQ(ns("12452.084"), 12452084);
  EXPECT_EQ(ns("1.12"), 1120);
  EXPECT_EQ(ns("0.8"), 800);
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("-3.5"), -3500);
}

TEST(Numbers, IntsFloatsStringsAndExponents) {
  EXPECT_EQ(ns("12"), 12000);
  EXPECT_EQ(ns("\"12.5\""), 12500);
  EXPECT_EQ(ns("12.5 \n "), 12500);  // simdjson raw tokens keep trailing whitespace
  EXPECT_EQ(ns("1.5e3"), 1500000);
  EXPECT_EQ(ns("1E-3"), 1);
  EXPECT_EQ(ns("5105435920172273e-3"), 5105435920172273);
  EXPECT_EQ(ns("0.000001e6"), 1000);
}

TEST(Numbers, RoundsBelowNanosecondsHalfAwayFromZero) {
  EXPECT_EQ(ns("1.2344"), 1234);
  EXPECT_EQ(ns("1.2345"), 1235);
  EXPECT_EQ(ns("-1.2345"), -1235);
  EXPECT_EQ(ns("0.0004999999999999999999999"), 0);
  EXPECT_EQ(ns("0.0005"), 1);
  // More than 19 significant digits: the dropped digits still round.
  EXPECT_EQ(ns("1234567890123456.7895"), 1234567890123456790);
}

TEST(Numbers, Integers) {
  int64_t v;
  EXPECT_EQ(parse_int64("9223372036854775807", &v), NumberStatus::kOk);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(parse_int64("-9223372036854775808", &v), NumberStatus::kOk);
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_EQ(parse_int64("9223372036854775808", &v), NumberStatus::kOverflow);
  EXPECT_EQ(parse_int64("18446744073709551615", &v), NumberStatus::kOverflow);  // Comms Id
  EXPECT_EQ(parse_int64("123456789012345678901234567890", &v), NumberStatus::kOverflow);
  EXPECT_EQ(parse_int64("1e400", &v), NumberStatus::kOverflow);
  EXPECT_EQ(parse_int64("1e-400", &v), NumberStatus::kOk);
  EXPECT_EQ(v, 0);
  EXPECT_EQ(parse_int64("42", &v), NumberStatus::kOk);
  EXPECT_EQ(v, 42);
}

TEST(Numbers, NotNumbers) {
  int64_t v = 7;
  for (const char* t :
       {"N/A", "\"N/A\"", "", "\"\"", "-", "e5", "1e", "1.2.3", "true", "null", "{", "0x10", "1 2", "nan", "inf"}) {
    EXPECT_EQ(parse_int64(t, &v), NumberStatus::kInvalid) << t;
  }
  EXPECT_EQ(v, 7);
  double d;
  EXPECT_EQ(parse_double("N/A", &d), NumberStatus::kInvalid);
  EXPECT_EQ(parse_double("nan", &d), NumberStatus::kInvalid);
  EXPECT_EQ(parse_double("62.5", &d), NumberStatus::kOk);
  EXPECT_EQ(d, 62.5);
  EXPECT_EQ(parse_double("\"-1e2\" ", &d), NumberStatus::kOk);
  EXPECT_EQ(d, -100.0);
}

}  // namespace
}  // namespace chokepoint::importers::json
