#include "importers/json/numbers.h"

#include <charconv>
#include <limits>

namespace chokepoint::importers::json {
namespace {

constexpr uint64_t kPow10[20] = {1ull,
                                 10ull,
                                 100ull,
                                 1000ull,
                                 10000ull,
                                 100000ull,
                                 1000000ull,
                                 10000000ull,
                                 100000000ull,
                                 1000000000ull,
                                 10000000000ull,
                                 100000000000ull,
                                 1000000000000ull,
                                 10000000000000ull,
                                 100000000000000ull,
                                 1000000000000000ull,
                                 10000000000000000ull,
                                 100000000000000000ull,
                                 1000000000000000000ull,
                                 10000000000000000000ull};
constexpr int kMaxDigits = 19;  // 10^19 - 1 fits uint64

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A decimal number as up to 19 significant digits times 10^exp10, plus the first digit
// dropped beyond those (for rounding) and whether any later dropped digit was non-zero.
struct Decimal {
  bool negative = false;
  uint64_t digits = 0;
  int64_t exp10 = 0;
  int round_digit = 0;
  bool sticky = false;
};

// Adds the digits of a number to a Decimal one at a time: up to 19 significant ones,
// then the rounding digit and the sticky bit.
struct DigitTaker {
  Decimal* d;
  int kept = 0, dropped = 0;
  bool any_digit = false;

  void take(char c, bool fraction) {
    any_digit = true;
    if (kept == 0 && c == '0') {
      if (fraction) --d->exp10;  // leading zeros of 0.000123 shift the exponent only
      return;
    }
    if (kept < kMaxDigits) {
      d->digits = d->digits * 10 + static_cast<uint64_t>(c - '0');
      ++kept;
      if (fraction) --d->exp10;
      return;
    }
    if (dropped++ == 0) {
      d->round_digit = c - '0';
    } else if (c != '0') {
      d->sticky = true;
    }
    if (!fraction) ++d->exp10;
  }
};

// The exponent of s from i (just past the 'e'), added to d->exp10; i ends past it.
// False when no digit follows the sign.
bool parse_exponent(std::string_view s, size_t& i, Decimal* d) {
  const size_t n = s.size();
  bool neg_exp = false;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg_exp = s[i++] == '-';
  if (i >= n || !is_digit(s[i])) return false;
  int64_t e = 0;
  while (i < n && is_digit(s[i])) {
    if (e < 100000) e = e * 10 + (s[i] - '0');  // saturate: 1e100000 overflows anyway
    ++i;
  }
  d->exp10 += neg_exp ? -e : e;
  return true;
}

bool parse_decimal(std::string_view s, Decimal* d) {
  size_t i = 0, n = s.size();
  if (i < n && (s[i] == '-' || s[i] == '+')) d->negative = s[i++] == '-';
  DigitTaker t{d};
  while (i < n && is_digit(s[i])) t.take(s[i++], false);
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && is_digit(s[i])) t.take(s[i++], true);
  }
  if (!t.any_digit) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (!parse_exponent(s, i, d)) return false;
  }
  return i == n;
}

}  // namespace

std::string_view number_text(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) {
    t.remove_suffix(1);
  }
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  return t;
}

NumberStatus parse_scaled(std::string_view raw_token, int scale, int64_t* out) {
  Decimal d;
  if (!parse_decimal(number_text(raw_token), &d)) return NumberStatus::kInvalid;
  uint64_t q = 0;
  if (d.digits != 0) {
    int64_t e = d.exp10 + scale;
    if (e >= 0) {
      if (e > kMaxDigits || __builtin_mul_overflow(d.digits, kPow10[e], &q)) {
        return NumberStatus::kOverflow;
      }
      // Digits dropped right below the unit decide the rounding.
      if (e == 0 && d.round_digit >= 5 && __builtin_add_overflow(q, 1, &q)) {
        return NumberStatus::kOverflow;
      }
    } else if (-e <= kMaxDigits) {
      uint64_t p = kPow10[-e];
      q = d.digits / p;
      uint64_t r = d.digits % p;
      if (r >= p - r) ++q;  // r/p >= 1/2 (written to avoid overflowing 2r)
    }
  }
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (d.negative ? 1 : 0);
  if (q > limit) return NumberStatus::kOverflow;
  *out = d.negative ? static_cast<int64_t>(0 - q) : static_cast<int64_t>(q);
  return NumberStatus::kOk;
}

NumberStatus parse_double(std::string_view raw_token, double* out) {
  std::string_view t = number_text(raw_token);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  if (t.empty() || !(is_digit(t.front()) || t.front() == '-')) return NumberStatus::kInvalid;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  if (end != t.data() + t.size()) return NumberStatus::kInvalid;
  if (ec == std::errc::result_out_of_range) return NumberStatus::kOverflow;
  return ec == std::errc() ? NumberStatus::kOk : NumberStatus::kInvalid;
}

}  // namespace chokepoint::importers::json
