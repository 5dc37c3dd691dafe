// Opening input files without hanging: a FIFO opened for reading blocks until a writer
// comes (forever, for a stray one planted where a trace, meta.json or a ceilings file is
// expected), and a device never ends. Every input file chokepoint reads goes through here.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace chokepoint {

// "a FIFO (named pipe)", "a character device", ...: what a non-regular file is.
std::string file_kind_name(mode_t mode);

// An fd open for reading (O_CLOEXEC) on a regular file, or an error that says what `path`
// is instead; never blocks on a FIFO. The caller closes the fd.
Result<int> open_regular_file(const std::string& path);

// The whole of a regular file, at most `max_bytes` (more is an error).
Result<std::string> read_regular_file(const std::string& path, size_t max_bytes = 64u << 20);

// True when `path` is a regular file (after symlinks); false for anything else or missing.
bool is_regular_file_path(const std::string& path);

}  // namespace chokepoint
