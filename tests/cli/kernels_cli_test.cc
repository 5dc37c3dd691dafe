// End-to-end tests of `chokepoint kernels` as a user runs it: an ncu export in each format,
// and --ncu's bad input (ncu missing, a command that fails before any CUDA work) with
// what ran kept. The H200 runs themselves are in docs/VALIDATION.md.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"

namespace {

const std::string kExe = CHOKEPOINT_BINARY;
const std::string kData = std::string(CHOKEPOINT_TEST_DATA) + "/kernels/";

using Output = chokepoint::cli_test::Combined;

Output run(const std::string& args, const std::string& cwd = "") {
  const std::string cd = cwd.empty() ? "" : "cd " + cwd + " && ";
  // CHOKEPOINT_TRACER_LIB: a stand-in for the CUPTI tracer where the build has none (no
  // CUDA toolkit); the commands run here never load CUDA.
  return chokepoint::cli_test::run_combined(
      cd + "CHOKEPOINT_PROFILE=none NO_COLOR=1 CHOKEPOINT_TRACER_LIB=/dev/null " + kExe + " " + args, "kernels_cli");
}

TEST(KernelsCli, NcuExportInEveryFormat) {
  Output text = run("kernels " + kData + "raw_metrics.csv.gz --top 2");
  EXPECT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("latency/occupancy-bound (shared memory)"), std::string::npos) << text.out;
  Output md = run("kernels -f md " + kData + "full_raw.csv.gz");
  EXPECT_EQ(md.rc, 0);
  EXPECT_NE(md.out.find("| 3 | `nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT` |"), std::string::npos) << md.out;
  Output js = run("kernels -f json " + kData + "full_raw.csv.gz");
  ASSERT_EQ(js.rc, 0);
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["kernels"].size(), 4u);
  EXPECT_EQ(j["ceilings"]["source"], "published:H200 SXM");
}

TEST(KernelsCli, BadInput) {
  Output none = run("kernels");
  EXPECT_EQ(none.rc, 2);
  Output details = run("kernels " + kData + "full_details.csv.gz");
  EXPECT_EQ(details.rc, 1);
  Output mixed = run("kernels " + kData + "full_raw.csv.gz " + CHOKEPOINT_TEST_DATA + "/kineto/small_grid.json.gz");
  EXPECT_EQ(mixed.rc, 2);
  EXPECT_NE(mixed.out.find("not both"), std::string::npos);
  Output no_ncu = run("kernels --ncu --ncu-path /nonexistent/ncu -- true");
  EXPECT_EQ(no_ncu.rc, 1);
  EXPECT_NE(no_ncu.out.find("is not an executable file"), std::string::npos) << no_ncu.out;
  Output no_cmd = run("kernels --ncu --ncu-path /bin/true");
  EXPECT_EQ(no_cmd.rc, 2);
}

TEST(KernelsCli, FailingCommandKeepsWhatRan) {
  const std::string cwd = ::testing::TempDir() + "/kernels_fail_" + std::to_string(getpid());
  std::filesystem::remove_all(cwd);
  std::filesystem::create_directories(cwd);
  // /bin/true stands in for ncu: the traced run fails first.
  Output o = run("kernels --ncu --ncu-path /bin/true --dir run -- sh -c 'echo started; exit 3'", cwd);
  EXPECT_EQ(o.rc, 1) << o.out;
  EXPECT_NE(o.out.find("exited with status 3"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("left no trace"), std::string::npos) << o.out;
  std::ifstream kept(cwd + "/run/trace.out");
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "started");
}

}  // namespace
