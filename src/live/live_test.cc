#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "base/terminal_text.h"
#include "live/child.h"
#include "live/session.h"
#include "samples/recording_reader.h"

namespace chokepoint::live {
namespace {

namespace fs = std::filesystem;
using samples::Entity;
using samples::MetricId;

std::string data(const std::string& rel) { return std::string(CHOKEPOINT_TEST_DATA) + "/" + rel; }

TEST(Child, ReportsExitCodesTheWayAShellDoes) {
  auto ok = Child::spawn({"true"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().wait(), 0);
  auto three = Child::spawn({"sh", "-c", "exit 3"});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three.value().wait(), 3);
  auto killed = Child::spawn({"sleep", "10"});
  ASSERT_TRUE(killed.ok());
  killed.value().signal(SIGTERM);
  EXPECT_EQ(killed.value().wait(), 128 + SIGTERM);
  EXPECT_TRUE(killed.value().poll().has_value());
}

TEST(Child, ExecFailureIsAStatusNotAChild) {
  auto r = Child::spawn({"/nonexistent/command"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot run '/nonexistent/command'"), std::string::npos) << r.status().message();
  EXPECT_FALSE(Child::spawn({}).ok());
}

TEST(Session, TicksAFixtureIntoARecordingThatReadsBack) {
  const std::string root = ::testing::TempDir() + "/session_root_" + std::to_string(getpid());
  fs::remove_all(root);
  fs::copy(data("proc/dev_vm/t0"), root, fs::copy_options::recursive);
  const std::string dir = ::testing::TempDir() + "/session_rec_" + std::to_string(getpid());
  fs::remove_all(dir);
  SessionOptions o;
  o.out_dir = dir;
  o.gpu = false;
  o.proc_root = root;
  auto s = Session::start(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s.value()->add_root(12548).ok());
  EXPECT_EQ(s.value()->gpu_unavailable(), "GPU sampling turned off (--no-gpu)");
  samples::TickTime t{1'700'000'000'000'000'000, 1'000'000'000};
  ASSERT_TRUE(s.value()->tick(t).ok());
  // The same files a second later: rates become zero, levels stay.
  t.realtime_ns += 1'000'000'000;
  t.monotonic_ns += 1'000'000'000;
  ASSERT_TRUE(s.value()->tick(t).ok());
  EXPECT_EQ(s.value()->ticks(), 2);
  EXPECT_TRUE(s.value()->latest().get(MetricId::kHostProcsRunning, Entity::host()).has_value());
  EXPECT_EQ(s.value()->processes().size(), 2u) << "root 12548 and its child 12590";
  ASSERT_TRUE(s.value()->finish(0).ok());

  auto rec = samples::read_recording(dir);
  ASSERT_TRUE(rec.ok());
  EXPECT_TRUE(rec.value().complete);
  EXPECT_EQ(rec.value().ticks, 2u);
  EXPECT_EQ(rec.value().meta.exit_code, 0);
  EXPECT_EQ(rec.value().meta.pid, 12548);
  EXPECT_EQ(rec.value().meta.processes.size(), 2u);
  EXPECT_EQ(rec.value().meta.gpu_unavailable, "GPU sampling turned off (--no-gpu)");
  fs::remove_all(root);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace chokepoint::live
