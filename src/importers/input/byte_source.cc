#include "importers/input/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/read_file.h"

namespace chokepoint::importers {
namespace {

std::string io_error(const std::string& path, int err) { return "cannot read '" + path + "': " + std::strerror(err); }

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, std::string path, uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  ~FileSource() override { ::close(fd_); }

  Result<size_t> read(char* dst, size_t n) override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_, dst + got, n - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::Error(ErrorCode::kIo, io_error(path_, errno));
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    consumed_ += got;
    return got;
  }
  uint64_t consumed() const override { return consumed_; }
  uint64_t total() const override { return size_; }

 private:
  int fd_;
  std::string path_;
  uint64_t size_;
  uint64_t consumed_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  Result<size_t> read(char* dst, size_t n) override {
    size_t k = std::min(n, bytes_.size() - pos_);
    if (k > 0) std::memcpy(dst, bytes_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  uint64_t consumed() const override { return pos_; }
  uint64_t total() const override { return bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Streaming inflate over another source. Handles concatenated members (what `cat a.gz
// b.gz` and parallel gzip tools produce); a stream cut off or corrupt ends the output
// and sets truncated() instead of failing, so the events decoded so far are kept.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)), in_(kInputBlock) {
    std::memset(&z_, 0, sizeof(z_));
    // 16 + MAX_WBITS: expect a gzip header and trailer.
    ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK;
    if (!ok_) truncated_ = true;
  }
  ~GzipSource() override {
    if (ok_) inflateEnd(&z_);
  }

  Result<size_t> read(char* dst, size_t n) override {
    size_t got = 0;
    while (got < n && !done_) {
      if (z_.avail_in == 0) {
        Result<size_t> r = inner_->read(in_.data(), in_.size());
        if (!r.ok()) return r.status();
        if (r.value() == 0) {
          // End of input: clean only between members.
          if (in_member_) truncated_ = true;
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(r.value());
      }
      if (!in_member_) {
        // A new member must start with the magic; anything else (zero padding some
        // writers append) ends the stream.
        if (z_.avail_in >= 1 && z_.next_in[0] != 0x1f) {
          truncated_ = !only_zeros();
          done_ = true;
          break;
        }
        in_member_ = true;
      }
      z_.next_out = reinterpret_cast<Bytef*>(dst + got);
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - got, 1u << 30));
      int rc = inflate(&z_, Z_NO_FLUSH);
      got = static_cast<size_t>(reinterpret_cast<char*>(z_.next_out) - dst);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        inflateReset(&z_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        truncated_ = true;  // Z_DATA_ERROR, Z_MEM_ERROR, Z_NEED_DICT: corrupt stream
        done_ = true;
      }
    }
    return got;
  }
  bool truncated() const override { return truncated_; }
  uint64_t consumed() const override { return inner_->consumed() - z_.avail_in; }
  uint64_t total() const override { return inner_->total(); }

 private:
  static constexpr size_t kInputBlock = 1 << 20;

  // True when the rest of the pending input is zero bytes (tar-style padding).
  bool only_zeros() {
    for (uInt i = 0; i < z_.avail_in; ++i) {
      if (z_.next_in[i] != 0) return false;
    }
    return true;
  }

  std::unique_ptr<ByteSource> inner_;
  std::vector<char> in_;
  z_stream z_;
  bool ok_ = false;
  bool in_member_ = false;
  bool done_ = false;
  bool truncated_ = false;
};

}  // namespace

bool is_gzip(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

Result<std::unique_ptr<ByteSource>> open_file(const std::string& path) {
  // O_NONBLOCK: a FIFO with no writer would block the open itself (base/read_file.h).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Error(ErrorCode::kIo, io_error(path, errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::Error(ErrorCode::kIo, io_error(path, err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::Error(ErrorCode::kIo, io_error(path, EISDIR));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(ErrorCode::kIo, "cannot read '" + path + "': " + file_kind_name(st.st_mode) + ", not a file");
  }
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  char magic[2];
  ssize_t m = ::pread(fd, magic, 2, 0);
  if (m < 0) {
    int err = errno;
    ::close(fd);
    return Status::Error(ErrorCode::kIo, io_error(path, err));
  }
  auto file = std::make_unique<FileSource>(fd, path, static_cast<uint64_t>(st.st_size));
  if (is_gzip(std::string_view(magic, static_cast<size_t>(m)))) {
    return std::unique_ptr<ByteSource>(std::make_unique<GzipSource>(std::move(file)));
  }
  return std::unique_ptr<ByteSource>(std::move(file));
}

std::unique_ptr<ByteSource> open_memory(std::string_view bytes) {
  auto mem = std::make_unique<MemorySource>(bytes);
  if (is_gzip(bytes)) return std::make_unique<GzipSource>(std::move(mem));
  return mem;
}

Result<std::string> read_head(const std::string& path, size_t max_bytes) {
  Result<std::unique_ptr<ByteSource>> src = open_file(path);
  if (!src.ok()) return src.status();
  std::string head(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    Result<size_t> r = src.value()->read(head.data() + got, max_bytes - got);
    if (!r.ok()) return r.status();
    if (r.value() == 0) break;
    got += r.value();
  }
  head.resize(got);
  // A .gz cut before its first inflated byte is not an empty file (issue 47: "empty").
  if (got == 0 && src.value()->truncated()) {
    return Status::Error(ErrorCode::kInput,
                         "cannot read '" + path + "': the gzip data is cut off or damaged before its first byte");
  }
  return head;
}

}  // namespace chokepoint::importers
