// ProcFs on the live /proc: held descriptors re-read fresh text, and a process that
// exits turns its held descriptor into ESRCH (never another process's data).
#include "sampler/proc/proc_fs.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <gtest/gtest.h>

#include "sampler/proc/proc_parsers.h"

namespace chokepoint::sampler::proc {
namespace {

TEST(ProcFsLive, HeldDescriptorSeesExitAsGone) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  ProcFs fs = ProcFs::live();
  const std::string path = "/proc/" + std::to_string(child) + "/stat";
  std::string text;
  ASSERT_EQ(fs.read(path, text), 0);
  ASSERT_TRUE(parse_task_stat(text));
  EXPECT_EQ(parse_task_stat(text)->ppid, getpid());
  EXPECT_EQ(fs.held_descriptors(), 1u);
  ASSERT_EQ(fs.read(path, text), 0);  // second read through the held descriptor
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const int rc = fs.read(path, text);
  EXPECT_TRUE(rc == ESRCH || rc == ENOENT) << rc;
  EXPECT_EQ(fs.held_descriptors(), 0u);
  EXPECT_EQ(fs.read("/proc/no_such_file", text), ENOENT);
}

TEST(ProcFsFixture, ErrnoFilesFakeUnreadableFiles) {
  ProcFs fs = ProcFs::fixture(std::string(CHOKEPOINT_TEST_DATA) + "/proc/variants/t0");
  std::string text;
  EXPECT_EQ(fs.read("/proc/4300/io", text), EACCES);
  EXPECT_EQ(fs.read("/proc/4242/io", text), 0);
  EXPECT_EQ(fs.held_descriptors(), 0u);
  const auto names = fs.list_dir("/proc/4242/task");
  EXPECT_EQ(names.size(), 2u);
}

}  // namespace
}  // namespace chokepoint::sampler::proc
