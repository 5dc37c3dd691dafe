// Writes a trace file (trace_format.h): the part of the CUPTI tracer that needs no CUDA,
// so it is built and tested everywhere. The injection library (tracer/cuda/) calls it
// from CUPTI's buffer-completed callback, on CUPTI's own thread: the application's
// threads never wait on it. Records are buffered and written with one write(2) per
// flush; a string (kernel or API name) is written once, before its first use.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tracer/trace_format.h"

namespace chokepoint::tracer {

class TraceWriter {
 public:
  // Creates DIR/trace-<pid>.cptrace (trace-<pid>-w<N>.cptrace for header.window N; never
  // overwrites) and writes the header. nullptr
  // when the file cannot be created; `error` then says why.
  static std::unique_ptr<TraceWriter> create(const std::string& dir, const FileHeader& header, std::string* error);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // The id of `s` (1, 2, ...), writing its kString record the first time.
  uint32_t intern(std::string_view s);
  void add(const Record& r);
  // Writes what is buffered. Returns false when the write failed (disk full ...).
  bool flush();
  // A kEnd record, a flush and close: the file is complete. `cut`: the process is exiting
  // inside the file's trace window (kEndWindowCut).
  bool finish(uint64_t dropped_total, bool cut = false);

  uint64_t records() const { return records_; }
  const std::string& path() const { return path_; }

  // Serializes under this lock: CUPTI may complete buffers on more than one thread.
  std::mutex& mutex() { return mu_; }

 private:
  TraceWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
  std::string buf_;
  std::unordered_map<std::string, uint32_t> ids_;
  uint64_t records_ = 0;
  std::mutex mu_;
};

// "DIR/trace-4242.cptrace"; window N: "DIR/trace-4242-wN.cptrace".
std::string trace_file_path(const std::string& dir, int64_t pid, uint32_t window = 0);

}  // namespace chokepoint::tracer
