#include "timeline/string_pool.h"

#include <algorithm>
#include <cstring>

namespace chokepoint::timeline {

StringPool::StringPool() {
  views_.push_back(std::string_view());
  index_.emplace(std::string_view(), kEmptyString);
}

std::string_view StringPool::store(std::string_view s) {
  if (s.size() > kBlockSize / 4) {  // big strings get a block of their own
    blocks_.emplace_back(new char[s.size()]);
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    arena_bytes_ += s.size();
    std::string_view v(blocks_.back().get(), s.size());
    // Keep filling the previous block: move the dedicated block before it.
    if (blocks_.size() >= 2) std::swap(blocks_[blocks_.size() - 1], blocks_[blocks_.size() - 2]);
    return v;
  }
  if (block_used_ + s.size() > kBlockSize) {
    blocks_.emplace_back(new char[kBlockSize]);
    block_used_ = 0;
    arena_bytes_ += kBlockSize;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(dst, s.size());
}

StringId StringPool::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  std::string_view stored = store(s);
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

bool StringPool::find(std::string_view s, StringId* id) const {
  auto it = index_.find(s);
  if (it == index_.end()) return false;
  *id = it->second;
  return true;
}

size_t StringPool::memory_bytes() const {
  return arena_bytes_ + views_.capacity() * sizeof(std::string_view) +
         index_.size() * (sizeof(std::string_view) + sizeof(StringId) + 2 * sizeof(void*));
}

}  // namespace chokepoint::timeline
