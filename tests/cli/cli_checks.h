// Checks the command-line tests share: what reaches a terminal.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace chokepoint::cli_test {

// Fails on a control character in `out` other than the reporter's own newlines: C0
// (ESC, BEL ...), DEL, C1 (U+0080..U+009F) and bytes that are not valid UTF-8 (a raw
// 0x9b is a CSI to a terminal in 8-bit mode). Decoded here, independently of the code
// under test.
inline void expect_no_controls(const std::string& out) {
  size_t i = 0;
  while (i < out.size()) {
    const auto c = static_cast<unsigned char>(out[i]);
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    ASSERT_NE(n, 0u) << "invalid UTF-8 lead byte " << static_cast<int>(c) << " at " << i;
    ASSERT_LE(i + n, out.size()) << "truncated UTF-8 at " << i;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(out[i + k]);
      ASSERT_EQ(d & 0xC0, 0x80) << "invalid UTF-8 at " << i;
      cp = (cp << 6) | (d & 0x3F);
    }
    EXPECT_FALSE((cp < 0x20 && cp != '\n') || (cp >= 0x7F && cp <= 0x9F))
        << "control U+" << std::hex << cp << " at byte " << std::dec << i << " in:\n"
        << out.substr(i > 80 ? i - 80 : 0, 160);
    i += n;
  }
}

// What a command printed, stdout then stderr, and its exit status.
struct Combined {
  int rc = -1;
  std::string out;  // stdout and stderr, in that order
};

// Runs `shell_line` (a command without redirections) with stdout and stderr captured to
// files of a folder named by `tag` and this process: CTest runs a file's tests in parallel.
inline Combined run_combined(const std::string& shell_line, const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "/" + tag + "_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string so = dir + "/stdout", se = dir + "/stderr";
  const int status = std::system((shell_line + " >" + so + " 2>" + se).c_str());
  Combined o;
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  for (const auto& f : {so, se}) {
    std::ifstream in(f);
    o.out += std::string(std::istreambuf_iterator<char>(in), {});
  }
  return o;
}

}  // namespace chokepoint::cli_test
