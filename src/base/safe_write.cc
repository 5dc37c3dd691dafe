#include "base/safe_write.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <streambuf>

namespace chokepoint {
namespace {

std::string why(int err) { return std::strerror(err); }

std::string quoted(const std::string& p) { return "'" + p + "'"; }

// The directory part of `path` with its slash ("" for a bare name), and the name.
void split(const std::string& path, std::string* dir, std::string* name) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) {
    dir->clear();
    *name = path;
  } else {
    *dir = path.substr(0, slash + 1);
    *name = path.substr(slash + 1);
  }
}

// 12 hex digits from the kernel's random source (the clock and pid if it has none).
std::string random_suffix() {
  unsigned char bytes[6] = {};
  if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const uint64_t v = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(getpid()) << 30) ^
                       static_cast<uint64_t>(ts.tv_sec);
    for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 0xF];
  }
  return s;
}

}  // namespace

// An output buffer straight onto the descriptor; the first failed write(2) is kept.
class SafeFile::Buf : public std::streambuf {
 public:
  explicit Buf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    size_t n = static_cast<size_t>(pptr() - pbase());
    while (n > 0 && error_ == 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        break;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    setp(buf_, buf_ + sizeof buf_);
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  char buf_[1 << 16];
};

SafeFile::SafeFile(std::string path, std::string temp, int fd, bool sync)
    : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), sync_(sync), buf_(std::make_unique<Buf>(fd)) {
  stream_ = std::make_unique<std::ostream>(buf_.get());
}

SafeFile::~SafeFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

std::ostream& SafeFile::stream() { return *stream_; }

Status SafeFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  return Status::Error(ErrorCode::kIo, what + " " + quoted(path_) + ": " + why(err));
}

Status SafeFile::commit() {
  if (fd_ < 0) return Status::Error(ErrorCode::kIo, "cannot write " + quoted(path_) + ": already closed");
  stream_->flush();
  if (buf_->error() != 0) return fail("cannot write", buf_->error());
  if (!stream_->good()) return fail("cannot write", EIO);
  if (sync_ && ::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) return fail("cannot sync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) return fail("cannot write", errno);
  if (temp_.empty()) return Status::Ok();  // written in place
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return fail("cannot replace", errno);
  temp_.clear();
  return Status::Ok();
}

Status check_not_same_file(const std::string& path, const std::vector<std::string>& keep) {
  struct stat dest {};
  if (::stat(path.c_str(), &dest) != 0) return Status::Ok();
  for (const std::string& k : keep) {
    struct stat st {};
    if (::stat(k.c_str(), &st) != 0) continue;
    if (st.st_dev == dest.st_dev && st.st_ino == dest.st_ino) {
      const std::string same = k == path ? "" : " (the same file)";
      return Status::Error(ErrorCode::kUsage, "refusing to write " + quoted(path) + ": it is the input " + quoted(k) +
                                                  same +
                                                  ", which the output would replace; choose another output path");
    }
  }
  return Status::Ok();
}

Result<int> create_new_file(const std::string& path, unsigned mode, int extra_flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags,
                        static_cast<mode_t>(mode));
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) return Status::Error(ErrorCode::kIo, "cannot create " + quoted(path) + ": it already exists");
    return Status::Error(ErrorCode::kIo, "cannot create " + quoted(path) + ": " + why(err));
  }
  return fd;
}

Result<std::unique_ptr<SafeFile>> SafeFile::open(const std::string& path, const SafeWriteOptions& o) {
  if (path.empty()) return Status::Error(ErrorCode::kUsage, "cannot write a file without a name");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      // A link to a FIFO, a terminal or a device (/dev/stdout) holds nothing to destroy;
      // a link to a file, or to nothing yet, could aim the write anywhere.
      struct stat target {};
      if (::stat(path.c_str(), &target) != 0 || S_ISREG(target.st_mode) || S_ISDIR(target.st_mode)) {
        char buf[4096];
        const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
        const std::string to = n > 0 ? " (to " + quoted(std::string(buf, static_cast<size_t>(n))) + ")" : "";
        return Status::Error(ErrorCode::kIo, "refusing to write " + quoted(path) + ": it is a symbolic link" + to +
                                                 "; chokepoint does not write through links: name the file itself");
      }
      st = target;
    } else if (S_ISDIR(st.st_mode)) {
      return Status::Error(ErrorCode::kIo, "cannot write " + quoted(path) + ": it is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd < 0) return Status::Error(ErrorCode::kIo, "cannot write " + quoted(path) + ": " + why(errno));
      return std::unique_ptr<SafeFile>(new SafeFile(path, "", fd, false));
    }
    if (Status s = check_not_same_file(path, o.keep); !s.ok()) return s;
  } else if (errno != ENOENT) {
    return Status::Error(ErrorCode::kIo, "cannot write " + quoted(path) + ": " + why(errno));
  }

  std::string dir, name;
  split(path, &dir, &name);
  if (name.size() > 200) name.resize(200);  // room for the suffix within NAME_MAX
  for (int attempt = 0; attempt < 32; ++attempt) {
    const std::string temp = dir + "." + name + "." + random_suffix() + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          static_cast<mode_t>(o.mode));
    if (fd >= 0) return std::unique_ptr<SafeFile>(new SafeFile(path, temp, fd, o.sync));
    if (errno != EEXIST) return Status::Error(ErrorCode::kIo, "cannot write " + quoted(path) + ": " + why(errno));
  }
  return Status::Error(ErrorCode::kIo, "cannot write " + quoted(path) + ": no unused temporary file name");
}

Status write_file_safely(const std::string& path, std::string_view bytes, const SafeWriteOptions& options) {
  auto f = SafeFile::open(path, options);
  if (!f.ok()) return f.status();
  f.value()->stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return f.value()->commit();
}

}  // namespace chokepoint
