#include "importers/input/same_content.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/read_file.h"

namespace chokepoint::importers {
namespace {

// read() until `n` bytes or the end; the count read, -1 on an error.
ssize_t read_full(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

bool equal_bytes(int fa, int fb) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<char> ba(kChunk), bb(kChunk);
  for (;;) {
    const ssize_t na = read_full(fa, ba.data(), kChunk);
    const ssize_t nb = read_full(fb, bb.data(), kChunk);
    if (na < 0 || nb < 0 || na != nb) return false;
    if (na == 0) return true;
    if (std::memcmp(ba.data(), bb.data(), static_cast<size_t>(na)) != 0) return false;
  }
}

}  // namespace

bool same_content(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) return true;
  if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) || sa.st_size != sb.st_size) return false;
  Result<int> fa = open_regular_file(a);
  if (!fa.ok()) return false;
  Result<int> fb = open_regular_file(b);
  if (!fb.ok()) {
    ::close(fa.value());
    return false;
  }
  const bool same = equal_bytes(fa.value(), fb.value());
  ::close(fa.value());
  ::close(fb.value());
  return same;
}

std::vector<std::string> distinct_contents(const std::vector<std::string>& paths,
                                           std::vector<std::pair<std::string, std::string>>* dropped) {
  std::vector<std::string> kept;
  for (const std::string& p : paths) {
    const std::string* twin = nullptr;
    for (const std::string& k : kept) {
      if (same_content(k, p)) {
        twin = &k;
        break;
      }
    }
    if (twin == nullptr) {
      kept.push_back(p);
    } else if (dropped != nullptr) {
      dropped->emplace_back(p, *twin);
    }
  }
  return kept;
}

}  // namespace chokepoint::importers
