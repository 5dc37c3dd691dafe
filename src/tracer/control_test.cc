#include "tracer/control.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace chokepoint::tracer {
namespace {

namespace fs = std::filesystem;

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "cp-control-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

// Serves one request on a thread; the client's reply.
std::string ask(ControlServer& server, const std::string& path, const std::string& request, std::string* error) {
  std::string seen;
  std::thread t([&] { server.serve_one(5000, [&](std::string_view r) { return (seen = r, "ok got " + seen); }); });
  std::string reply;
  const bool ok = control_request(path, request, 5000, &reply, error);
  t.join();
  return ok ? reply : "";
}

TEST(ControlRequest, ParsesAndFormats) {
  EXPECT_EQ(parse_control_request("steps 20")->steps, 20);
  EXPECT_EQ(parse_control_request("duration 1000")->duration_ns, 1000);
  for (const char* bad : {"steps 0", "steps -1", "steps", "steps 2x", "duration", "trace 5", ""}) {
    EXPECT_FALSE(parse_control_request(bad).has_value()) << bad;
  }
  EXPECT_EQ(format_control_request({.steps = 7}), "steps 7");
  EXPECT_EQ(format_control_request({.duration_ns = 9}), "duration 9");
}

TEST_F(ControlTest, OneRequestOneReplyOverA0600Socket) {
  const std::string path = control_socket_path(dir_, 4242);
  EXPECT_EQ(path, dir_ + "/control-4242.sock");
  std::string error;
  auto server = ControlServer::listen(path, &error);
  ASSERT_NE(server, nullptr) << error;
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(check_control_socket(path), "");
  EXPECT_EQ(ask(*server, path, "steps 20", &error), "ok got steps 20") << error;
  EXPECT_FALSE(server->serve_one(0, [](std::string_view) { return std::string("ok"); }));  // nobody asked
  server.reset();
  EXPECT_FALSE(fs::exists(path));  // removed with the server
}

TEST_F(ControlTest, NeverReplacesAFile) {
  const std::string path = control_socket_path(dir_, 1);
  std::ofstream(path) << "x";
  std::string error;
  EXPECT_EQ(ControlServer::listen(path, &error), nullptr);
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
  std::string reply;
  EXPECT_FALSE(control_request(path, "steps 1", 100, &reply, &error));
  EXPECT_NE(error.find("not a socket"), std::string::npos) << error;
}

TEST_F(ControlTest, ClientRefusesASocketOthersCanReach) {
  const std::string path = control_socket_path(dir_, 2);
  std::string error;
  auto server = ControlServer::listen(path, &error);
  ASSERT_NE(server, nullptr) << error;
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  std::string reply;
  EXPECT_FALSE(control_request(path, "steps 1", 100, &reply, &error));
  EXPECT_NE(error.find("mode is not 0600"), std::string::npos) << error;
}

TEST_F(ControlTest, NoSocketIsSaid) {
  std::string reply, error;
  EXPECT_FALSE(control_request(control_socket_path(dir_, 3), "steps 1", 100, &reply, &error));
  EXPECT_NE(error.find("no control socket"), std::string::npos) << error;
}

TEST_F(ControlTest, ALongDirectoryIsReachedThroughItsDescriptor) {
  std::string deep = dir_;
  while (deep.size() < 150) deep += "/a-rather-long-directory-name";
  fs::create_directories(deep);
  const std::string path = control_socket_path(deep, 5);
  std::string error;
  auto server = ControlServer::listen(path, &error);
  ASSERT_NE(server, nullptr) << error;
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(ask(*server, path, "duration 5", &error), "ok got duration 5") << error;
}

}  // namespace
}  // namespace chokepoint::tracer
