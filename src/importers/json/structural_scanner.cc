#include "importers/json/structural_scanner.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace chokepoint::importers::json {
namespace {

// Bit i of each mask describes byte i of a 64-byte block.
struct BlockMasks {
  uint64_t quote, backslash, open, close, control;
};

#if defined(__SSE2__)
// SSE2 is part of x86-64, so this needs no runtime dispatch.
inline BlockMasks classify(const char* p) {
  BlockMasks m{0, 0, 0, 0, 0};
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  const __m128i max_control = _mm_set1_epi8(0x1f);
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    // '[' and ']' are '{' and '}' with bit 0x20 clear; no other byte folds onto them.
    __m128i folded = _mm_or_si128(v, case_bit);
    auto bits = [&](__m128i eq) {
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(eq))) << (16 * k);
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote));
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
    m.open |= bits(_mm_cmpeq_epi8(folded, open));
    m.close |= bits(_mm_cmpeq_epi8(folded, close));
    m.control |= bits(_mm_cmpeq_epi8(_mm_max_epu8(v, max_control), max_control));
  }
  return m;
}
#else
inline BlockMasks classify(const char* p) {
  BlockMasks m{0, 0, 0, 0, 0};
  for (int i = 0; i < 64; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    const uint64_t bit = uint64_t{1} << i;
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '[') m.open |= bit;
    if (c == '}' || c == ']') m.close |= bit;
    if (c < 0x20) m.control |= bit;
  }
  return m;
}
#endif

// Bytes preceded by an odd-length run of backslashes. `carry` is 1 when the block's first
// byte is escaped by a run that ended the previous block, and is updated for the next.
inline uint64_t escaped_bytes(uint64_t backslash, uint64_t* carry) {
  constexpr uint64_t kEven = 0x5555555555555555ull;
  const uint64_t first_escaped = *carry;
  backslash &= ~first_escaped;  // an escaped backslash is a literal, not a run start
  const uint64_t starts = backslash & ~(backslash << 1);
  // Adding a run's start bit to the run carries to the byte just after the run; the
  // run's length is odd when that byte's parity differs from the start's.
  const uint64_t after_even_runs = (backslash + (starts & kEven)) & ~backslash;
  uint64_t odd_sum;
  const bool odd_run_at_end = __builtin_add_overflow(backslash, starts & ~kEven, &odd_sum);
  const uint64_t after_odd_runs = odd_sum & ~backslash;
  *carry = odd_run_at_end ? 1 : 0;  // a run from odd bit s to bit 63 has odd length 64-s
  return (after_even_runs & ~kEven) | (after_odd_runs & kEven) | first_escaped;
}

// Bit i set when an odd number of bits at positions <= i are set in x.
inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

inline bool is_scalar_end(char c) { return is_json_space(c) || c == ',' || c == ']' || c == '}' || c == ':'; }

}  // namespace

ScanResult find_container_end(const char* data, size_t len, size_t begin) {
  int64_t depth = 0;
  uint64_t in_string_carry = 0;  // all ones when the previous block ended inside a string
  uint64_t escape_carry = 0;
  for (size_t pos = begin; pos < len; pos += 64) {
    const BlockMasks m = classify(data + pos);
    const size_t valid = len - pos;
    const uint64_t valid_mask = valid >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid) - 1;
    const uint64_t quotes = m.quote & ~escaped_bytes(m.backslash, &escape_carry) & valid_mask;
    const uint64_t in_string = prefix_xor(quotes) ^ in_string_carry;
    in_string_carry = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    uint64_t structural = (m.open | m.close) & ~in_string & valid_mask;
    const uint64_t bad = m.control & in_string & valid_mask;
    const size_t first_bad = bad ? static_cast<size_t>(__builtin_ctzll(bad)) : 64;
    while (structural) {
      const size_t i = static_cast<size_t>(__builtin_ctzll(structural));
      if (first_bad < i) return {ScanResult::kCorrupt, pos + first_bad};
      depth += ((m.open >> i) & 1) ? 1 : -1;
      if (depth == 0) return {ScanResult::kComplete, pos + i + 1};
      structural &= structural - 1;
    }
    if (bad) return {ScanResult::kCorrupt, pos + first_bad};
  }
  return {ScanResult::kNeedMore, len};
}

ScanResult find_container_end_scalar(const char* data, size_t len, size_t begin) {
  int64_t depth = 0;
  bool in_string = false, escape = false;
  for (size_t i = begin; i < len; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    // Like the block scanner: a backslash escapes the next byte wherever it is, and only
    // an unescaped quote toggles string state.
    const bool escaped = escape;
    escape = c == '\\' && !escaped;
    if (c == '"' && !escaped) {
      in_string = !in_string;
    } else if (in_string) {
      if (c < 0x20) return {ScanResult::kCorrupt, i};
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return {ScanResult::kComplete, i + 1};
    }
  }
  return {ScanResult::kNeedMore, len};
}

ScanResult find_string_end(const char* data, size_t len, size_t begin) {
  for (size_t i = begin + 1; i < len; ++i) {
    if (data[i] == '\\') {
      ++i;
    } else if (data[i] == '"') {
      return {ScanResult::kComplete, i + 1};
    }
  }
  return {ScanResult::kNeedMore, len};
}

ScanResult find_value_end(const char* data, size_t len, size_t begin) {
  const char c = data[begin];
  if (c == '{' || c == '[') return find_container_end(data, len, begin);
  if (c == '"') return find_string_end(data, len, begin);
  if (c == '}' || c == ']' || c == ',' || c == ':') return {ScanResult::kCorrupt, begin};
  for (size_t i = begin; i < len; ++i) {
    if (data[i] == '"' || data[i] == '{' || data[i] == '[') return {ScanResult::kCorrupt, i};
    if (is_scalar_end(data[i])) return {ScanResult::kComplete, i};
  }
  return {ScanResult::kNeedMore, len};
}

ScanResult find_resync_point(const char* data, size_t len, size_t from) {
  size_t p = from;
  while (p < len) {
    const void* hit = std::memchr(data + p, '}', len - p);
    if (!hit) return {ScanResult::kNeedMore, len};
    const size_t brace = static_cast<size_t>(static_cast<const char*>(hit) - data);
    size_t i = brace + 1;
    while (i < len && is_json_space(data[i])) ++i;
    if (i < len && data[i] == ']') return {ScanResult::kComplete, i};
    if (i < len && data[i] == ',') {
      ++i;
      while (i < len && is_json_space(data[i])) ++i;
      if (i < len && data[i] == '{') return {ScanResult::kComplete, i};
    }
    if (i >= len) return {ScanResult::kNeedMore, brace};
    p = brace + 1;
  }
  return {ScanResult::kNeedMore, len};
}

}  // namespace chokepoint::importers::json
