// Byte sources: a chunked reader over a plain file, a gzip file or a memory buffer, so
// that importers stream their input instead of holding whole files (traces reach 1-10 GB).
// Gzip is detected from its magic bytes, never from the file name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace chokepoint::importers {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes into `dst`; returns how many, 0 at the end of the input.
  // A non-ok result is an I/O error; a corrupt or cut-off gzip stream is not an error:
  // it ends early and sets truncated().
  virtual Result<size_t> read(char* dst, size_t n) = 0;
  // True when a compressed stream ended before its end marker or was corrupt; what was
  // decoded before that point has been returned.
  virtual bool truncated() const { return false; }
  // Bytes of the underlying file (or buffer) consumed so far and its total size; both
  // count compressed bytes for gzip input, which keeps progress proportional.
  virtual uint64_t consumed() const = 0;
  virtual uint64_t total() const = 0;
};

// True when `head` starts with the gzip magic bytes 1f 8b.
bool is_gzip(std::string_view head);

// Opens `path` for streaming, decompressing when it starts with the gzip magic.
// Errors are one line naming the path.
Result<std::unique_ptr<ByteSource>> open_file(const std::string& path);

// Streams `bytes` (not copied: they must outlive the source), decompressing gzip.
std::unique_ptr<ByteSource> open_memory(std::string_view bytes);

// The first `max_bytes` decompressed bytes of `path` (fewer when the file is shorter), for
// format sniffing.
Result<std::string> read_head(const std::string& path, size_t max_bytes);

}  // namespace chokepoint::importers
