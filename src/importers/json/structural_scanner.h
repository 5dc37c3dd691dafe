// A structural scanner for streamed JSON: finds where a value ends inside a buffer without
// parsing it, so that a big array (Kineto's traceEvents) can be cut into complete elements
// and each batch handed to simdjson. It tracks strings, escapes and nesting only.
//
// Every function takes a buffer `data` of `len` bytes and a start offset, and reports
// either the end of the value, that the buffer ends first (more input is needed), or that
// the bytes cannot be JSON. find_container_end reads up to 63 bytes past `len`: callers
// keep kScanPadding readable (ignored) bytes after their data.
#pragma once

#include <cstddef>

namespace chokepoint::importers::json {

inline constexpr size_t kScanPadding = 64;

struct ScanResult {
  enum Kind { kComplete, kNeedMore, kCorrupt };
  Kind kind;
  // kComplete: one past the value's last byte. kCorrupt: offset of the offending byte.
  // kNeedMore: unused.
  size_t pos;
};

// The object or array starting at data[begin] ('{' or '['). A raw control character
// inside a string is kCorrupt: JSON forbids it, and in pretty-printed traces it is how an
// unescaped quote shows (the quote flips string state until the end of the line).
ScanResult find_container_end(const char* data, size_t len, size_t begin);

// Same result as find_container_end, one byte at a time (reference for tests and fuzzing).
ScanResult find_container_end_scalar(const char* data, size_t len, size_t begin);

// The string whose opening quote is data[begin].
ScanResult find_string_end(const char* data, size_t len, size_t begin);

// Any value starting at data[begin]: container, string or scalar token (a number, a
// literal, or junk such as a bare N/A), which ends before whitespace , ] } or :.
ScanResult find_value_end(const char* data, size_t len, size_t begin);

// After a corrupt array element, the next place where an element plausibly starts: the
// '{' of `} , {` or the ']' of `} ]` (whitespace allowed between), searched from `from`.
// kComplete: pos is that '{' or ']'. kNeedMore: nothing found; bytes before `pos` can be
// dropped and the search resumed at `pos` once more input is appended.
ScanResult find_resync_point(const char* data, size_t len, size_t from);

inline bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace chokepoint::importers::json
