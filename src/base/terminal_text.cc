#include "base/terminal_text.h"

#include <cstdint>

namespace chokepoint {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence at s[i] and its code point; 0 when the bytes there
// are not valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n = 0;
  uint32_t v = 0, min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, v = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, v = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// C0, DEL and C1; and the Unicode format characters that reorder or break what is shown
// (bidi embeddings, overrides and isolates, the marks, the line and paragraph separators):
// a name holding U+202E shows its text reversed, the "Trojan Source" trick (CVE-2021-42574).
bool is_control(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Calls byte(i) for each byte to escape as "\xNN", cp(i, n, code point) for each C1
// control to escape as "\u00NN", keep(i, n) for each run to keep; stops early when a
// callback returns false.
template <typename Byte, typename C1, typename Keep>
void scan(std::string_view s, Byte byte, C1 c1, Keep keep) {
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = 0;
    const size_t n = utf8_sequence(s, i, &cp);
    if (n == 0 || (n == 1 && is_control(cp))) {
      if (!byte(i)) return;
      ++i;
    } else if (is_control(cp)) {
      if (!c1(cp)) return;
      i += n;
    } else {
      size_t j = i + n;  // extend the run over further plain ASCII cheaply
      while (j < s.size()) {
        const auto c = static_cast<unsigned char>(s[j]);
        if (c < 0x20 || c >= 0x7F) break;
        ++j;
      }
      if (!keep(i, j - i)) return;
      i = j;
    }
  }
}

bool is_wide(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) || (cp >= 0x1F900 && cp <= 0x1F9FF) ||
         (cp >= 0x20000 && cp <= 0x3FFFD);
}

// Bytes of the character at s[i] (1 for an invalid byte) and its columns.
size_t next_char(std::string_view s, size_t i, size_t* cols) {
  uint32_t cp = 0;
  const size_t n = utf8_sequence(s, i, &cp);
  if (n == 0) {
    *cols = 1;
    return 1;
  }
  *cols = is_wide(cp) ? 2 : 1;
  return n;
}

}  // namespace

size_t display_columns(std::string_view s) {
  size_t cols = 0;
  for (size_t i = 0; i < s.size();) {
    size_t c = 0;
    i += next_char(s, i, &c);
    cols += c;
  }
  return cols;
}

std::string_view cut_to_columns(std::string_view s, size_t columns) {
  size_t used = 0, i = 0;
  while (i < s.size()) {
    size_t c = 0;
    const size_t n = next_char(s, i, &c);
    if (used + c > columns) break;
    used += c;
    i += n;
  }
  return s.substr(0, i);
}

std::string escape_controls(std::string_view s) {
  if (!has_controls(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  scan(
      s,
      [&](size_t i) {
        const auto c = static_cast<unsigned char>(s[i]);
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
        return true;
      },
      [&](uint32_t cp) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
        return true;
      },
      [&](size_t i, size_t n) {
        out.append(s.data() + i, n);
        return true;
      });
  return out;
}

bool has_controls(std::string_view s) {
  bool found = false;
  scan(
      s, [&](size_t) { return !(found = true); }, [&](uint32_t) { return !(found = true); },
      [](size_t, size_t) { return true; });
  return found;
}

}  // namespace chokepoint
