#include "base/safe_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace chokepoint {
namespace {
namespace fs = std::filesystem;

class SafeWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("chokepoint_safe_write_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void put(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  // Names in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(SafeWriteTest, WritesANewFileWithoutLeavingATemporary) {
  ASSERT_TRUE(write_file_safely(path("r.json"), "{\"a\":1}\n").ok());
  EXPECT_EQ(read(path("r.json")), "{\"a\":1}\n");
  EXPECT_EQ(names(), std::vector<std::string>{"r.json"});
}

TEST_F(SafeWriteTest, ReplacesAnExistingFile) {
  put(path("r.txt"), "old report, longer than the new one");
  ASSERT_TRUE(write_file_safely(path("r.txt"), "new").ok());
  EXPECT_EQ(read(path("r.txt")), "new");
  EXPECT_EQ(names(), std::vector<std::string>{"r.txt"});
}

TEST_F(SafeWriteTest, TemporaryIsRandomAndBesideTheDestination) {
  auto a = SafeFile::open(path("r.txt"));
  auto b = SafeFile::open(path("r.txt"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a.value()->temp_path(), b.value()->temp_path());
  EXPECT_EQ(fs::path(a.value()->temp_path()).parent_path(), dir_);
  EXPECT_EQ(fs::path(a.value()->temp_path()).filename().string().find(std::to_string(getpid())), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::lstat(a.value()->temp_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST_F(SafeWriteTest, RefusesASymlinkToAFileAndLeavesItsTargetAlone) {
  put(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("report.json"));
  const Status s = write_file_safely(path("report.json"), "report");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(path("report.json")), std::string::npos) << s.message();
  EXPECT_EQ(read(path("victim")), "precious");
  EXPECT_TRUE(fs::is_symlink(path("report.json")));
  EXPECT_EQ(names(), (std::vector<std::string>{"report.json", "victim"}));
}

TEST_F(SafeWriteTest, RefusesADanglingSymlinkAndCreatesNothingThrough) {
  fs::create_symlink(path("created-through-link"), path("report.json"));
  EXPECT_FALSE(write_file_safely(path("report.json"), "report").ok());
  EXPECT_FALSE(fs::exists(path("created-through-link")));
}

TEST_F(SafeWriteTest, RefusesTheSameFileAsAnInputByInode) {
  put(path("trace.json"), "trace");
  fs::create_hard_link(path("trace.json"), path("alias.json"));
  SafeWriteOptions o;
  o.keep = {path("trace.json")};
  Status s = write_file_safely(path("trace.json"), "report", o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("it is the input"), std::string::npos) << s.message();
  s = write_file_safely(path("alias.json"), "report", o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path("alias.json")), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(path("trace.json")), std::string::npos) << s.message();
  EXPECT_EQ(read(path("trace.json")), "trace");
  // Another file is fine, and so is a missing input.
  o.keep.push_back(path("missing.json"));
  EXPECT_TRUE(write_file_safely(path("report.txt"), "report", o).ok());
}

TEST_F(SafeWriteTest, WithoutCommitTheDestinationStaysAsItWas) {
  put(path("r.txt"), "old");
  {
    auto f = SafeFile::open(path("r.txt"));
    ASSERT_TRUE(f.ok());
    f.value()->stream() << "half a report";
  }
  EXPECT_EQ(read(path("r.txt")), "old");
  EXPECT_EQ(names(), std::vector<std::string>{"r.txt"});
}

TEST_F(SafeWriteTest, WritesAFifoInPlace) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read(path("fifo")); });
  const Status s = write_file_safely(path("fifo"), "through the pipe");
  reader.join();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(got, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(SafeWriteTest, WritesDevNullThroughALink) {
  fs::create_symlink("/dev/null", path("null"));
  EXPECT_TRUE(write_file_safely(path("null"), "nothing").ok());
  EXPECT_TRUE(fs::is_symlink(path("null")));
}

TEST_F(SafeWriteTest, RefusesADirectory) {
  const Status s = write_file_safely(dir_.string(), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is a directory"), std::string::npos) << s.message();
}

TEST_F(SafeWriteTest, CreateNewFileNeverOpensWhatIsThere) {
  put(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("samples.jsonl"));
  auto fd = create_new_file(path("samples.jsonl"), 0644, O_APPEND);
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.status().message().find("already exists"), std::string::npos) << fd.status().message();
  fs::create_symlink(path("nowhere"), path("dangling"));
  EXPECT_FALSE(create_new_file(path("dangling")).ok());
  EXPECT_FALSE(fs::exists(path("nowhere")));
  auto ok = create_new_file(path("fresh"));
  ASSERT_TRUE(ok.ok());
  ::close(ok.value());
  EXPECT_EQ(read(path("victim")), "precious");
}

}  // namespace
}  // namespace chokepoint
