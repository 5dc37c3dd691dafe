#include "base/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chokepoint {

std::string file_kind_name(mode_t mode) {
  if (S_ISREG(mode)) return "a file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Result<int> open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Error(ErrorCode::kIo, "cannot read '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Error(ErrorCode::kIo, "cannot read '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(ErrorCode::kIo, "cannot read '" + path + "': " + file_kind_name(st.st_mode) + ", not a file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Result<std::string> read_regular_file(const std::string& path, size_t max_bytes) {
  Result<int> fd = open_regular_file(path);
  if (!fd.ok()) return fd.status();
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.value(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd.value());
      return Status::Error(ErrorCode::kIo, "cannot read '" + path + "': " + std::strerror(err));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd.value());
      return Status::Error(ErrorCode::kIo,
                           "cannot read '" + path + "': larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd.value());
  return out;
}

bool is_regular_file_path(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace chokepoint
