#include "importers/input/byte_source.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace chokepoint::importers {
namespace {

std::string gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string read_all(ByteSource& src, size_t step) {
  std::string out, buf(step, '\0');
  while (true) {
    Result<size_t> r = src.read(buf.data(), step);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r.value() == 0) break;
    out.append(buf.data(), r.value());
  }
  return out;
}

std::string sample(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "{\"ph\": \"X\", \"ts\": " + std::to_string(i) + "},\n";
  return s.substr(0, n);
}

class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/byte_source_testXXXXXX";
    int fd = mkstemp(name);
    path_ = name;
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ByteSource, PlainFileInChunks) {
  const std::string data = sample(100000);
  TempFile f(data);
  Result<std::unique_ptr<ByteSource>> src = open_file(f.path());
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(src.value()->total(), data.size());
  EXPECT_EQ(read_all(*src.value(), 4093), data);
  EXPECT_EQ(src.value()->consumed(), data.size());
  EXPECT_FALSE(src.value()->truncated());
}

TEST(ByteSource, GzipFileWithConcatenatedMembers) {
  const std::string a = sample(300000), b = sample(5000);
  const std::string gz = gzip(a) + gzip(b);
  TempFile f(gz);
  Result<std::unique_ptr<ByteSource>> src = open_file(f.path());
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(read_all(*src.value(), 7777), a + b);
  EXPECT_FALSE(src.value()->truncated());
  EXPECT_EQ(src.value()->consumed(), gz.size());
  EXPECT_EQ(src.value()->total(), gz.size());
}

TEST(ByteSource, TruncatedGzipGivesWhatItHasAndAFlag) {
  const std::string data = sample(1 << 20);
  const std::string gz = gzip(data);
  std::unique_ptr<ByteSource> src = open_memory(std::string_view(gz).substr(0, gz.size() / 2));
  const std::string got = read_all(*src, 65536);
  EXPECT_TRUE(src->truncated());
  EXPECT_GT(got.size(), data.size() / 4);
  EXPECT_LT(got.size(), data.size());
  EXPECT_EQ(got, data.substr(0, got.size()));
}

TEST(ByteSource, CorruptGzipStopsWithAFlag) {
  std::string gz = gzip(sample(200000));
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] = static_cast<char>(~gz[i]);
  std::unique_ptr<ByteSource> src = open_memory(gz);
  read_all(*src, 4096);
  EXPECT_TRUE(src->truncated());
}

TEST(ByteSource, TrailingZerosAfterGzipAreNotAnError) {
  const std::string data = sample(1000);
  const std::string gz = gzip(data) + std::string(512, '\0');
  std::unique_ptr<ByteSource> src = open_memory(gz);
  EXPECT_EQ(read_all(*src, 100), data);
  EXPECT_FALSE(src->truncated());
}

TEST(ByteSource, GarbageAfterGzipIsFlagged) {
  const std::string data = sample(1000);
  const std::string gz = gzip(data) + "trailing junk";
  std::unique_ptr<ByteSource> src = open_memory(gz);
  EXPECT_EQ(read_all(*src, 100), data);
  EXPECT_TRUE(src->truncated());
}

TEST(ByteSource, ReadHeadDecompresses) {
  const std::string data = sample(200000);
  TempFile f(gzip(data));
  Result<std::string> head = read_head(f.path(), 1000);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head.value(), data.substr(0, 1000));
}

TEST(ByteSource, Errors) {
  Result<std::unique_ptr<ByteSource>> missing = open_file("/nonexistent/trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot read '/nonexistent/trace.json': No such file or directory");
  Result<std::unique_ptr<ByteSource>> dir = open_file("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(), "cannot read '/tmp': Is a directory");
}

}  // namespace
}  // namespace chokepoint::importers
