#include "tracer/trace_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/safe_write.h"

namespace chokepoint::tracer {
namespace {
// Flush once this much is buffered (also at every CUPTI buffer and at exit).
constexpr size_t kFlushBytes = 1 << 20;

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
}  // namespace

std::string trace_file_path(const std::string& dir, int64_t pid, uint32_t window) {
  std::string path = dir + "/" + kTraceFilePrefix + std::to_string(pid);
  if (window > 0) path += "-w" + std::to_string(window);
  return path + kTraceFileSuffix;
}

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& dir, const FileHeader& header, std::string* error) {
  const std::string path = trace_file_path(dir, header.pid, header.window);
  // A file of its own: never one that is there already, nor through a planted link.
  auto created = create_new_file(path, 0644);
  if (!created.ok()) {
    if (error != nullptr) *error = created.status().message();
    return nullptr;
  }
  const int fd = created.value();
  std::unique_ptr<TraceWriter> w(new TraceWriter(path, fd));
  if (!write_all(fd, reinterpret_cast<const char*>(&header), sizeof header)) {
    if (error != nullptr) *error = "cannot write " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  return w;
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) {
    flush();
    ::close(fd_);
  }
}

uint32_t TraceWriter::intern(std::string_view s) {
  const auto it = ids_.find(std::string(s));
  if (it != ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(ids_.size() + 1);
  ids_.emplace(std::string(s), id);
  Record r{};
  r.kind = static_cast<uint8_t>(RecordKind::kString);
  r.name = id;
  r.start = s.size();
  buf_.append(reinterpret_cast<const char*>(&r), sizeof r);
  buf_.append(s.data(), s.size());
  buf_.append((sizeof(Record) - s.size() % sizeof(Record)) % sizeof(Record), '\0');
  return id;
}

void TraceWriter::add(const Record& r) {
  buf_.append(reinterpret_cast<const char*>(&r), sizeof r);
  ++records_;
  if (buf_.size() >= kFlushBytes) flush();
}

bool TraceWriter::flush() {
  if (fd_ < 0 || buf_.empty()) return fd_ >= 0;
  const bool ok = write_all(fd_, buf_.data(), buf_.size());
  buf_.clear();
  return ok;
}

bool TraceWriter::finish(uint64_t dropped_total, bool cut) {
  if (fd_ < 0) return false;
  Record end{};
  end.kind = static_cast<uint8_t>(RecordKind::kEnd);
  end.start = records_;
  end.end = dropped_total;
  end.sub = cut ? kEndWindowCut : 0;
  buf_.append(reinterpret_cast<const char*>(&end), sizeof end);
  const bool ok = flush();
  ::fsync(fd_);
  ::close(fd_);
  fd_ = -1;
  return ok;
}

}  // namespace chokepoint::tracer
