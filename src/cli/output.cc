#include "cli/output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace chokepoint::cli {
namespace {

// Runs `write` into `out`; its error, or "cannot write" when the stream failed.
Status write_to(std::ostream& out, const StreamWriter& write, const std::string& path) {
  Status s = write(out);
  out.flush();
  if (!s.ok()) return s;
  if (!out.good()) return Status::Error("cannot write '" + path + "'");
  return Status::Ok();
}

Status write_file(const std::string& path, const StreamWriter& write) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    std::ofstream out(path, std::ios::binary);
    return write_to(out, write, path);
  }
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    Status s = write_to(out, write, path);
    if (!s.ok()) {
      std::filesystem::remove(tmp, ec);
      return s;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status::Error("cannot write '" + path + "'");
  }
  return Status::Ok();
}

}  // namespace

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

std::optional<int64_t> parse_duration_ns(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  if (scale == 0 || !(v > 0) || v * scale > 9e18) return std::nullopt;
  return static_cast<int64_t>(v * scale);
}

int text_width(int fallback) {
  const char* cols = std::getenv("COLUMNS");
  return cols != nullptr ? std::max(60, std::atoi(cols)) : fallback;
}

bool write_output(const std::string& command, const std::string& path, const std::string& text,
                  bool quiet) {
  return write_output_stream(
      command, path,
      [&text](std::ostream& out) {
        out << text;
        return Status::Ok();
      },
      quiet);
}

bool write_output_stream(const std::string& command, const std::string& path, const StreamWriter& write,
                         bool quiet) {
  if (path.empty() || path == "-") {
    Status s = write(std::cout);
    std::cout.flush();
    // A closed pipe (`| head`) is not worth a message; the producer's own failure is.
    if (!s.ok() && std::cout.good()) std::fprintf(stderr, "chokepoint %s: %s\n", command.c_str(), s.message().c_str());
    return s.ok() && std::cout.good();
  }
  Status s = write_file(path, write);
  if (!s.ok()) {
    std::fprintf(stderr, "chokepoint %s: %s\n", command.c_str(), s.message().c_str());
    return false;
  }
  if (!quiet) std::fprintf(stderr, "chokepoint %s: wrote %s\n", command.c_str(), path.c_str());
  return true;
}

}  // namespace chokepoint::cli
