#include "bench/module_loader.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "bench/bench_run.h"
#include "bench/expectations.h"

namespace chokepoint::bench {
namespace {

namespace fs = std::filesystem;

TEST(ModuleLoader, CandidatesNextToTheExecutableThenLib) {
  unsetenv(kModuleEnvVar);
  const auto c = module_candidates("/opt/cp/bin");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], "/opt/cp/bin/libchokepoint_bench.so");
  EXPECT_EQ(c[1], "/opt/cp/bin/../lib/chokepoint/libchokepoint_bench.so");
  EXPECT_EQ(c[2], "/opt/cp/bin/../lib/libchokepoint_bench.so");
}

TEST(ModuleLoader, EnvironmentPathIsTheOnlyCandidate) {
  setenv(kModuleEnvVar, "/tmp/x/libmine.so", 1);
  const auto c = module_candidates("/opt/cp/bin");
  unsetenv(kModuleEnvVar);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0], "/tmp/x/libmine.so");
}

// The "no CUDA in this build" path: the CLI prints this and exits 1.
TEST(ModuleLoader, MissingModuleSaysSo) {
  auto m = BenchModule::load({"/nonexistent/a/libchokepoint_bench.so", "/nonexistent/b/libchokepoint_bench.so"});
  ASSERT_FALSE(m.ok());
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("libchokepoint_bench.so was not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/nonexistent/a/libchokepoint_bench.so, /nonexistent/b/"), std::string::npos) << msg;
  EXPECT_NE(msg.find("built without the CUDA toolkit"), std::string::npos) << msg;
}

TEST(ModuleLoader, UnloadableFileSaysWhy) {
  const fs::path p = fs::temp_directory_path() / ("chokepoint_fake_" + std::to_string(getpid()) + ".so");
  std::ofstream(p) << "not an ELF file";
  auto m = BenchModule::load({p.string()});
  fs::remove(p);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("cannot load the GPU benchmark module " + p.string()), std::string::npos)
      << m.status().message();
}

TEST(ModuleLoader, SharedLibraryWithoutEntryPointsIsRejected) {
  Dl_info info{};
  // gnu_get_libc_version: in libc.so.6 itself (printf may resolve to a sanitizer's
  // interceptor linked into this test, which is no library to load).
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  auto m = BenchModule::load({info.dli_fname});  // libc: loads, but is no bench module
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("is not a chokepoint benchmark module"), std::string::npos)
      << m.status().message();
}

#ifdef CHOKEPOINT_BENCH_MODULE_PATH
// The real module, built where the CUDA toolkit is (CI has the toolkit, not a GPU).

// A testcase the module lists: described, with a unit; a selftest by its key, any other
// one known to the judge.
void check_listed_testcase(const TestcaseInfo& t) {
  EXPECT_FALSE(t.description.empty()) << t.key;
  EXPECT_FALSE(t.unit.empty()) << t.key;
  if (t.selftest) {
    EXPECT_EQ(t.key.rfind("selftest_", 0), 0u) << t.key;
  } else {
    EXPECT_NE(expectation_for(t.key), nullptr) << "the judge does not know " << t.key;
  }
}

TEST(RealModule, RegistryMatchesTheJudge) {
  auto m = BenchModule::load({CHOKEPOINT_BENCH_MODULE_PATH});
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto list = list_testcases(*m.value());
  ASSERT_TRUE(list.ok()) << list.status().message();
  std::set<std::string> module_keys;
  int selftests = 0;
  for (const auto& t : list.value()) {
    check_listed_testcase(t);
    if (t.selftest) {
      ++selftests;
    } else {
      module_keys.insert(t.key);
    }
  }
  for (const auto& e : expectations()) {
    EXPECT_EQ(module_keys.count(std::string(e.key)), 1u) << "the module has no testcase " << e.key;
  }
  EXPECT_EQ(selftests, 10);
}

TEST(RealModule, BadOptionsAreRejected) {
  auto m = BenchModule::load({CHOKEPOINT_BENCH_MODULE_PATH});
  ASSERT_TRUE(m.ok());
  BenchOptions o;
  o.mode = "warp-speed";
  auto r = run_bench(*m.value(), o, {}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown mode 'warp-speed'"), std::string::npos) << r.status().message();
  o.mode = "quick";
  o.only = {"no_such_test"};
  r = run_bench(*m.value(), o, {}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown testcase 'no_such_test'"), std::string::npos);
}

// Without a visible GPU (CI has no driver; elsewhere CUDA_VISIBLE_DEVICES hides them)
// the module loads, finds no device and says so: the CLI prints it and exits 1.
TEST(RealModule, NoGpuIsAClearError) {
  setenv("CUDA_VISIBLE_DEVICES", "-1", 1);  // before the first CUDA call of this process
  auto m = BenchModule::load({CHOKEPOINT_BENCH_MODULE_PATH});
  ASSERT_TRUE(m.ok()) << m.status().message();
  BenchOptions o;
  o.mode = "quick";
  o.only = {"launch_latency"};
  int calls = 0;
  auto r = run_bench(
      *m.value(), o, [&calls](int, int, const std::string&) { ++calls; }, nullptr);
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg.rfind("no usable GPU: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  EXPECT_EQ(calls, 0);
}
#endif

}  // namespace
}  // namespace chokepoint::bench
