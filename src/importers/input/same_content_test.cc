#include "importers/input/same_content.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace chokepoint::importers {
namespace {

namespace fs = std::filesystem;

std::string dir_with(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/same_content_" + std::to_string(getpid()) + "_" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Issue 47: a copy under another name, a hard link and a second path to one file are one
// input; the same size with other bytes (the last byte differs) is two.
TEST(SameContent, CopiesLinksAndPathsAreOneInput) {
  const std::string d = dir_with("copies");
  const std::string body(3 << 20, 'x');  // over one 1 MiB read
  std::ofstream(d + "/a.json") << body;
  std::ofstream(d + "/copy.json") << body;
  std::ofstream(d + "/other.json") << body.substr(0, body.size() - 1) << 'y';
  fs::create_hard_link(d + "/a.json", d + "/hard.json");
  const std::string again = d + "/../" + fs::path(d).filename().string() + "/a.json";
  EXPECT_TRUE(same_content(d + "/a.json", d + "/copy.json"));
  EXPECT_TRUE(same_content(d + "/a.json", d + "/hard.json"));
  EXPECT_TRUE(same_content(d + "/a.json", again));
  EXPECT_FALSE(same_content(d + "/a.json", d + "/other.json"));
  EXPECT_FALSE(same_content(d + "/a.json", d + "/missing.json"));

  std::vector<std::pair<std::string, std::string>> dropped;
  const auto kept = distinct_contents({d + "/a.json", d + "/other.json", d + "/copy.json", again}, &dropped);
  EXPECT_EQ(kept, (std::vector<std::string>{d + "/a.json", d + "/other.json"}));
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0], std::make_pair(d + "/copy.json", d + "/a.json"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace chokepoint::importers
