// Value<T>: a reading plus its validity bit (docs/ARCHITECTURE.md convention 7). NVML answers
// "not supported", "no permission" or "this driver lacks the function" for many metrics
// on many devices; carrying the code with the value keeps those from ever printing as 0.
#pragma once

#include <utility>

namespace chokepoint::nvml {

// Codes of our own, outside NVML's range (NVML's are >= 0).
inline constexpr int kMissingSymbol = -1;  // the loaded library does not export the entry point
inline constexpr int kNotQueried = -2;     // nobody asked (default state)
inline constexpr int kOutOfRange = -3;     // the call succeeded, but the reading is impossible

template <typename T>
struct Value {
  bool valid = false;
  T value{};
  int error = kNotQueried;  // NVML return code when !valid; 0 when valid

  static Value ok(T v) { return Value{true, std::move(v), 0}; }
  static Value fail(int code) { return Value{false, T{}, code}; }

  explicit operator bool() const { return valid; }
  const T& operator*() const { return value; }
  const T* operator->() const { return &value; }
  T value_or(T fallback) const { return valid ? value : std::move(fallback); }
  // Same validity and error, another payload (for derived readings).
  template <typename U>
  Value<U> with(U v) const {
    return valid ? Value<U>::ok(std::move(v)) : Value<U>::fail(error);
  }
};

// `v` when it is invalid already or lies in [lo, hi]; else invalid (kOutOfRange). A driver
// that lost its GPU, a wrong struct layout or a sentinel (0xFFFFFFFF, -1) gives readings no
// GPU can have: recorded as a missing reading, never as a value (ranges.h).
template <typename T, typename L>
Value<T> within(Value<T> v, L lo, L hi) {
  if (v.valid && (v.value < static_cast<T>(lo) || v.value > static_cast<T>(hi))) return Value<T>::fail(kOutOfRange);
  return v;
}

}  // namespace chokepoint::nvml
