#include "base/read_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace chokepoint {
namespace {

std::string temp(const std::string& name) {
  const std::string p = ::testing::TempDir() + "/read_file_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove(p);
  return p;
}

// Issue 13: a FIFO where a file is expected (meta.json, --ceilings FILE) made the reader
// wait for a writer forever. It is refused at once and named.
TEST(ReadFile, FifoIsRefusedWithoutBlocking) {
  const std::string p = temp("fifo");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const Result<std::string> r = read_regular_file(p);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a FIFO (named pipe), not a file"), std::string::npos) << r.status().message();
  EXPECT_FALSE(is_regular_file_path(p));
  std::filesystem::remove(p);
}

TEST(ReadFile, ReadsAFileUpToItsBound) {
  const std::string p = temp("plain");
  std::ofstream(p) << "0123456789";
  EXPECT_EQ(read_regular_file(p).value(), "0123456789");
  EXPECT_FALSE(read_regular_file(p, 4).ok());
  EXPECT_TRUE(is_regular_file_path(p));
  EXPECT_FALSE(read_regular_file("/nonexistent/x").ok());
  EXPECT_FALSE(read_regular_file("/tmp").ok());
  EXPECT_EQ(file_kind_name(S_IFCHR), "a character device");
  std::filesystem::remove(p);
}

}  // namespace
}  // namespace chokepoint
