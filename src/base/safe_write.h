// Writing files without destroying what is not ours. Every file chokepoint writes (a
// report, a trace export, a recording's meta.json, a bench profile) goes through here:
//   - the bytes go to a new temporary file in the destination's directory, with a random
//     name, created O_CREAT|O_EXCL|O_NOFOLLOW (no planted file or symbolic link is ever
//     opened or truncated), and are renamed over the destination only once all are
//     written, so a crash never leaves half a file and a reader sees the old or the new;
//   - a destination that is a symbolic link is refused, not written through (a link
//     planted at report.json would otherwise aim the write at any file of the user);
//   - a destination that is one of the command's inputs (the same device and inode) is
//     refused: `analyze trace.json -o trace.json` would replace the trace with its report;
//   - a FIFO, a terminal or /dev/null (possibly behind a link such as /dev/stdout) is
//     written in place: nothing there can be destroyed, and a rename would replace it.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace chokepoint {

struct SafeWriteOptions {
  unsigned mode = 0644;  // of the new file (the umask applies)
  bool sync = false;     // fsync(2) the file before it replaces the destination
  // Files the destination must not be (the command's inputs); each is compared by
  // device and inode with the destination, when both exist.
  std::vector<std::string> keep;
};

// A file being written: stream() takes the bytes, commit() puts the file in place.
// Destroyed without commit(), the temporary file is removed and the destination is
// left as it was.
class SafeFile {
 public:
  static Result<std::unique_ptr<SafeFile>> open(const std::string& path, const SafeWriteOptions& options = {});
  ~SafeFile();
  SafeFile(const SafeFile&) = delete;
  SafeFile& operator=(const SafeFile&) = delete;

  std::ostream& stream();
  // Flushes, syncs when asked, closes and renames the temporary file over the path.
  Status commit();

  const std::string& path() const { return path_; }
  // The temporary file ("" when written in place).
  const std::string& temp_path() const { return temp_; }

 private:
  class Buf;
  SafeFile(std::string path, std::string temp, int fd, bool sync);
  Status fail(const std::string& what, int err);

  std::string path_, temp_;
  int fd_ = -1;
  bool sync_ = false;
  std::unique_ptr<Buf> buf_;
  std::unique_ptr<std::ostream> stream_;
};

// `bytes` written to `path` through a SafeFile.
Status write_file_safely(const std::string& path, std::string_view bytes, const SafeWriteOptions& options = {});

// An error when `path` exists and is the same file (device and inode) as one of `keep`:
// "refusing to write PATH: it is the input KEEP". Ok otherwise, also when a path is
// missing.
Status check_not_same_file(const std::string& path, const std::vector<std::string>& keep);

// Creates `path`, which must not exist (not even as a dangling symbolic link), with
// O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC and `extra_flags` (O_APPEND): the open
// descriptor, or why not ("already exists" for EEXIST).
Result<int> create_new_file(const std::string& path, unsigned mode = 0644, int extra_flags = 0);

}  // namespace chokepoint
