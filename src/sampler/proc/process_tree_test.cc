#include "sampler/proc/process_tree.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace chokepoint::sampler::proc {
namespace {

namespace fs = std::filesystem;

// /proc/PID/stat as the kernel writes it (52 fields; the command may hold spaces and ')').
void write_stat(const fs::path& root, int64_t pid, int64_t ppid, const std::string& comm) {
  fs::create_directories(root / "proc" / std::to_string(pid));
  std::ofstream(root / "proc" / std::to_string(pid) / "stat")
      << pid << " (" << comm << ") S " << ppid
      << " 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 100 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 "
         "0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
}

TEST(ProcessTree, RootAndItsDescendantsOnly) {
  const fs::path root = fs::path(::testing::TempDir()) / "process_tree";
  fs::remove_all(root);
  write_stat(root, 1, 0, "init");
  write_stat(root, 100, 1, "python train.py");
  write_stat(root, 101, 100, "pt_data_worker");
  write_stat(root, 102, 100, "weird) name (");
  write_stat(root, 150, 101, "grandchild");
  write_stat(root, 200, 1, "someone else");
  fs::create_directories(root / "proc" / "self");
  std::ofstream(root / "proc" / "stat") << "cpu 1 2 3\n";
  ProcFs pfs = ProcFs::fixture(root.string());
  EXPECT_EQ(process_tree(pfs, 100), (std::vector<int64_t>{100, 101, 102, 150}));
  EXPECT_EQ(process_tree(pfs, 150), std::vector<int64_t>{150});
  EXPECT_EQ(process_tree(pfs, 4242), std::vector<int64_t>{4242}) << "a pid that is gone is only itself";
}

TEST(ProcessTree, ThisProcessAndItsChildOnTheLiveMachine) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    close(fds[1]);
    (void)!read(fds[0], &c, 1);  // until the parent has looked
    _exit(0);
  }
  close(fds[0]);
  ProcFs pfs = ProcFs::live();
  const auto tree = process_tree(pfs, getpid());
  close(fds[1]);
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree.front(), getpid());
  EXPECT_NE(std::find(tree.begin(), tree.end(), child), tree.end());
}

}  // namespace
}  // namespace chokepoint::sampler::proc
