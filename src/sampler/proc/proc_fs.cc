#include "sampler/proc/proc_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace chokepoint::sampler::proc {
namespace {

constexpr size_t kMaxHeld = 4096;
constexpr size_t kReadChunk = 4096;

size_t held_cap() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return kMaxHeld;
  return std::min<size_t>(kMaxHeld, rl.rlim_cur / 4);
}

// Reads the whole file from offset 0; procfs files report size 0, so read to EOF.
int read_fd(int fd, std::string& out) {
  out.clear();
  off_t offset = 0;
  for (;;) {
    const size_t old = out.size();
    out.resize(old + kReadChunk);
    const ssize_t n = ::pread(fd, out.data() + old, kReadChunk, offset);
    if (n < 0) {
      const int err = errno;
      out.resize(old);
      if (err == EINTR) continue;
      return err;
    }
    out.resize(old + static_cast<size_t>(n));
    if (n == 0) return 0;
    offset += n;
  }
}

}  // namespace

ProcFs::ProcFs(std::string root, bool hold) : root_(std::move(root)), hold_(hold), max_held_(hold ? held_cap() : 0) {}

ProcFs ProcFs::live() { return ProcFs("/", true); }
ProcFs ProcFs::fixture(std::string root) { return ProcFs(std::move(root), false); }

ProcFs::~ProcFs() {
  for (const auto& [path, fd] : fds_) ::close(fd);
}

ProcFs::ProcFs(ProcFs&& other) noexcept
    : root_(std::move(other.root_)), hold_(other.hold_), max_held_(other.max_held_), fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

std::string ProcFs::resolve(const std::string& path) const {
  if (root_.empty() || root_ == "/") return path;
  std::string r = root_;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r + path;
}

int ProcFs::read(const std::string& path, std::string& out) {
  if (hold_) {
    if (const auto it = fds_.find(path); it != fds_.end()) {
      const int rc = read_fd(it->second, out);
      if (rc == ESRCH || rc == ENOENT) {  // the task is gone: this descriptor is dead for good
        ::close(it->second);
        fds_.erase(it);
      }
      return rc;
    }
  }
  if (!hold_) {
    const int fake = ::open((resolve(path) + ".errno").c_str(), O_RDONLY | O_CLOEXEC);
    if (fake >= 0) {
      read_fd(fake, out);
      ::close(fake);
      const int err = std::atoi(out.c_str());
      out.clear();
      return err > 0 ? err : EIO;
    }
  }
  const int fd = ::open(resolve(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.clear();
    return errno;
  }
  const int rc = read_fd(fd, out);
  if (hold_ && rc == 0 && fds_.size() < max_held_) {
    fds_.emplace(path, fd);
  } else {
    ::close(fd);
  }
  return rc;
}

std::vector<std::string> ProcFs::list_dir(const std::string& path) const {
  std::vector<std::string> names;
  DIR* dir = ::opendir(resolve(path).c_str());
  if (dir == nullptr) return names;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  return names;
}

void ProcFs::forget(const std::string& prefix) {
  auto it = fds_.lower_bound(prefix);
  while (it != fds_.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
    ::close(it->second);
    it = fds_.erase(it);
  }
}

}  // namespace chokepoint::sampler::proc
