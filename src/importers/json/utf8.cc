#include "importers/json/utf8.h"

namespace chokepoint::importers::json {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// Length of the well-formed sequence starting at p[0], or 0 when it is not one.
size_t sequence_length(const unsigned char* p, size_t left) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (left < n || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (!is_continuation(p[i])) return 0;
  }
  return n;
}

}  // namespace

size_t sanitize_utf8(char* data, size_t len) {
  auto* p = reinterpret_cast<unsigned char*>(data);
  size_t replaced = 0;
  for (size_t i = 0; i < len;) {
    const size_t n = sequence_length(p + i, len - i);
    if (n == 0) {
      p[i++] = '?';
      ++replaced;
    } else {
      i += n;
    }
  }
  return replaced;
}

}  // namespace chokepoint::importers::json
