// StringPool: interns strings (kernel names, op names, annotations) so that event tables
// store a 4-byte StringId per row instead of a string. Id 0 is always the empty string.
// Storage is an append-only arena of large blocks, so string_views stay valid while the
// pool lives and the pool never copies the bytes it already holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace chokepoint::timeline {

using StringId = uint32_t;
inline constexpr StringId kEmptyString = 0;

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  // Returns the id of `s`, adding it when new.
  StringId intern(std::string_view s);
  // Returns the id of `s` if present.
  bool find(std::string_view s, StringId* id) const;
  std::string_view view(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the arena and the index (an estimate for memory reports).
  size_t memory_bytes() const;

 private:
  static constexpr size_t kBlockSize = 1 << 20;
  std::string_view store(std::string_view s);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = kBlockSize;
  size_t arena_bytes_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace chokepoint::timeline
