// Exact parsing of JSON number tokens. Kineto writes times as microseconds with
// nanosecond precision ("5105435920172.273"); going through a double would round
// (doubles hold ~15.9 significant digits and those timestamps have 16), so times are
// converted to integer nanoseconds from the decimal text itself.
#pragma once

#include <cstdint>
#include <string_view>

namespace chokepoint::importers::json {

enum class NumberStatus : uint8_t {
  kOk,
  kOverflow,  // a number, but its value does not fit int64 (e.g. a 20-digit "Comms Id")
  kInvalid,   // not a number at all (bare N/A, "", true, an object ...)
};

// Trims what simdjson's raw tokens carry: trailing whitespace, and the quotes of a number
// written as a string ("12.5"). Returns the number text.
std::string_view number_text(std::string_view raw_token);

// Parses a decimal number (int, fraction, exponent) and returns value * 10^scale rounded
// to the nearest integer (ties away from zero). scale = 3 turns microseconds into
// nanoseconds exactly; scale = 0 reads integers. `raw_token` may be quoted.
NumberStatus parse_scaled(std::string_view raw_token, int scale, int64_t* out);

inline NumberStatus parse_int64(std::string_view raw_token, int64_t* out) { return parse_scaled(raw_token, 0, out); }
inline NumberStatus parse_us_as_ns(std::string_view raw_token, int64_t* out) { return parse_scaled(raw_token, 3, out); }

// Parses any JSON number (or a quoted one) as a double.
NumberStatus parse_double(std::string_view raw_token, double* out);

}  // namespace chokepoint::importers::json
