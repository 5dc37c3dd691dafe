#include "cli/output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "base/safe_write.h"
#include "base/terminal_text.h"

namespace chokepoint::cli {
namespace {

Status write_file(const std::string& path, const StreamWriter& write, const std::vector<std::string>& inputs) {
  SafeWriteOptions o;
  o.keep = inputs;
  auto file = SafeFile::open(path, o);
  if (!file.ok()) return file.status();
  std::ostream& out = file.value()->stream();
  Status s = write(out);
  if (!s.ok()) return s;  // the temporary file goes with `file`
  return file.value()->commit();
}

}  // namespace

void say(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "chokepoint %s: %s\n", command.c_str(), escape_controls(message).c_str());
}

bool want_color(const std::string& mode, bool to_file) { return want_color_on(mode, to_file, STDOUT_FILENO); }

bool want_color_on(const std::string& mode, bool to_file, int fd) {
  if (mode == "always") return true;
  if (mode == "never" || to_file) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string(term) == "dumb") return false;
  return isatty(fd) == 1;
}

int text_width(int fallback) {
  const char* cols = std::getenv("COLUMNS");
  return cols != nullptr ? std::max(60, std::atoi(cols)) : fallback;
}

bool write_output(const std::string& command, const std::string& path, const std::string& text, bool quiet,
                  const std::vector<std::string>& inputs) {
  return write_output_stream(
      command, path,
      [&text](std::ostream& out) {
        out << text;
        return Status::Ok();
      },
      quiet, inputs);
}

bool write_output_stream(const std::string& command, const std::string& path, const StreamWriter& write, bool quiet,
                         const std::vector<std::string>& inputs) {
  if (path.empty() || path == "-") {
    Status s = write(std::cout);
    std::cout.flush();
    // A closed pipe (`| head`) is not worth a message; the producer's own failure is.
    if (!s.ok() && std::cout.good()) say(command, s.message());
    return s.ok() && std::cout.good();
  }
  Status s = write_file(path, write, inputs);
  if (!s.ok()) {
    say(command, s.message());
    return false;
  }
  if (!quiet) say(command, "wrote " + path);
  return true;
}

std::vector<std::string> input_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    out.push_back(p);
    std::error_code ec;
    if (!fs::is_directory(p, ec)) continue;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_regular_file(type_ec)) out.push_back(it->path().string());
    }
  }
  return out;
}

}  // namespace chokepoint::cli
