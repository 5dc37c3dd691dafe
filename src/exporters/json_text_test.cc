#include "exporters/json_text.h"

#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace chokepoint::exporters {
namespace {

std::string as_json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string us(int64_t ns) {
  std::string out;
  append_json_us(out, ns);
  return out;
}

TEST(JsonText, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(as_json("void k<float>(\"a\\b\")"), R"j("void k<float>(\"a\\b\")")j");
  EXPECT_EQ(as_json(std::string("a\nb\tc\x01"
                                "d\x1f",
                                8)),
            R"("a\nb\tc\u0001d\u001f")");
  EXPECT_EQ(as_json(std::string("nul\0x", 5)), R"("nul\u0000x")");
}

TEST(JsonText, KeepsUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(as_json("caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80"), "\"caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80\"");
  // A lone continuation byte, Latin-1, a sequence cut short, an overlong '/', a surrogate.
  const std::string bad =
      "a\x80"
      "b\xE9"
      "c\xE2\x86"
      "d\xC0\xAF"
      "e\xED\xA0\x80";
  const std::string out = as_json(bad);
  const auto parsed = nlohmann::json::parse(out).get<std::string>();  // throws on bad UTF-8
  EXPECT_EQ(parsed.find('\x80'), std::string::npos);
  EXPECT_EQ(parsed.substr(0, 4),
            "a\xEF\xBF\xBD"
            "");
  EXPECT_NE(parsed.find("c\xEF\xBF\xBD\xEF\xBF\xBD"
                        "d"),
            std::string::npos);
}

TEST(JsonText, MicrosecondsWithThreeDecimals) {
  EXPECT_EQ(us(0), "0.000");
  EXPECT_EQ(us(1), "0.001");
  EXPECT_EQ(us(1001), "1.001");
  EXPECT_EQ(us(123456789), "123456.789");
  EXPECT_EQ(us(-1005), "-1.005");
  EXPECT_EQ(us(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

TEST(JsonText, NumbersRoundTripAndNonFiniteIsNull) {
  std::string out;
  append_json_double(out, 0.1);
  out += ' ';
  append_json_double(out, 150754820096.0);
  out += ' ';
  append_json_double(out, std::numeric_limits<double>::quiet_NaN());
  out += ' ';
  append_json_int(out, -42);
  out += ' ';
  append_json_float(out, 0.3f);
  EXPECT_EQ(out, "0.1 150754820096 null -42 0.3");
}

}  // namespace
}  // namespace chokepoint::exporters
