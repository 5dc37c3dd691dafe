// Hand-written JSON text for documents too big for a DOM (the Chrome trace export writes
// one event per timeline row, 10^7 of them): appending to a std::string buffer that the
// caller flushes in chunks. Everything appended is valid JSON whatever the input bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chokepoint::exporters {

// Appends `s` as a quoted JSON string: '"' and '\' escaped, control characters as \n, \t
// or \u00XX, and every byte that is not part of well-formed UTF-8 (a kernel name cut in
// the middle of a character, Latin-1 from a user annotation) replaced by U+FFFD, so
// that strict parsers (Perfetto's, nlohmann's) accept the document.
void append_json_string(std::string& out, std::string_view s);

void append_json_int(std::string& out, int64_t v);

// A finite double in the shortest form that reads back to the same value; "null" for NaN
// and infinities, which JSON cannot hold.
void append_json_double(std::string& out, double v);
// The same for a float column, in the shortest form of the float ("0.3", not the
// 0.30000001192092896 of its widening to double).
void append_json_float(std::string& out, float v);

// Nanoseconds as microseconds with exactly three decimals ("-1.005", "1234.567"): the
// trace-event format counts in µs, and printing the ns as digits keeps them exact where
// a double of epoch µs would round them.
void append_json_us(std::string& out, int64_t ns);

}  // namespace chokepoint::exporters
