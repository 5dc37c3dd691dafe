// Repairing invalid UTF-8. simdjson rejects a whole document that holds one invalid byte;
// kernel and op names from C++ (demangled templates, user strings) occasionally do, so
// the bad bytes are replaced in place and the event kept.
#pragma once

#include <cstddef>

namespace chokepoint::importers::json {

// Replaces every byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF) by '?'. Returns how many were replaced.
size_t sanitize_utf8(char* data, size_t len);

}  // namespace chokepoint::importers::json
