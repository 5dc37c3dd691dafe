#include "tracer/setup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace chokepoint::tracer {
namespace {
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("cp_setup_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_file(const fs::path& p, const std::string& text, bool executable = false) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  if (executable) ::chmod(p.c_str(), 0755);
}

TEST(TracerSetup, CuptiMajorFromSonameOrLoaderMessage) {
  EXPECT_EQ(cupti_major_of("/usr/local/cuda/lib64/libcupti.so.13"), 13);
  EXPECT_EQ(cupti_major_of("libcupti.so.12: cannot open shared object file: No such file or directory"), 12);
  EXPECT_EQ(cupti_major_of("libcupti.so"), 0);
  EXPECT_EQ(cupti_major_of(""), 0);
}

TEST(TracerSetup, PythonOfACommandDirectOrThroughItsShebang) {
  const fs::path d = fresh_dir("python");
  const fs::path bin = d / "venv" / "bin";
  write_file(bin / "python3", "", true);
  write_file(bin / "torchrun", "#!/usr/bin/env python3\nimport sys\n", true);
  write_file(bin / "pinned", "#!" + (bin / "python3").string() + " -u\n", true);
  write_file(bin / "tool", "#!/bin/sh\necho\n", true);
  const std::string path = "/nonexistent:" + bin.string();
  EXPECT_EQ(python_of_command({"python3", "train.py"}, path), (bin / "python3").string());
  EXPECT_EQ(python_of_command({"torchrun", "--nproc-per-node", "2"}, path), (bin / "python3").string());
  EXPECT_EQ(python_of_command({(bin / "pinned").string()}, path), (bin / "python3").string());
  EXPECT_EQ(python_of_command({"tool"}, path), "");
  EXPECT_EQ(python_of_command({"./a.out"}, path), "");
  EXPECT_EQ(python_of_command({}, path), "");
  fs::remove_all(d);
}

TEST(TracerSetup, CuptiOfPyTorchWheelsInTheJobsEnvironment) {
  const fs::path d = fresh_dir("wheels");
  const fs::path venv = d / "venv";
  write_file(venv / "bin" / "python3", "", true);
  const fs::path sp = venv / "lib" / "python3.12" / "site-packages";
  write_file(sp / "nvidia" / "cuda_cupti" / "lib" / "libcupti.so.12", "");
  write_file(sp / "nvidia" / "cu13" / "lib" / "libcupti.so.13", "");
  write_file(sp / "nvidia" / "cublas" / "lib" / "libcublas.so.13", "");
  const auto dirs = site_packages_of((venv / "bin" / "python3").string());
  ASSERT_EQ(dirs, std::vector<std::string>{sp.string()});
  EXPECT_EQ(find_wheel_cupti(dirs, "libcupti.so.13"), (sp / "nvidia" / "cu13" / "lib" / "libcupti.so.13").string());
  EXPECT_EQ(find_wheel_cupti(dirs, "libcupti.so.12"),
            (sp / "nvidia" / "cuda_cupti" / "lib" / "libcupti.so.12").string());
  EXPECT_EQ(find_wheel_cupti(dirs, "libcupti.so.14"), "");
  EXPECT_TRUE(site_packages_of("").empty());
  fs::remove_all(d);
}

TEST(TracerSetup, ProbeOfAMissingLibrarySaysSo) {
  const TracerProbe p = probe_tracer("/nonexistent/libchokepoint_tracer.so");
  EXPECT_FALSE(p.loads);
  EXPECT_NE(p.error.find("/nonexistent/libchokepoint_tracer.so"), std::string::npos) << p.error;
}

#ifdef CHOKEPOINT_TEST_TRACER_LIB
// The library this build made, loaded as run --trace's job would load it: its libcupti
// is the toolkit's (CUDA 13 here and on CI).
TEST(TracerSetup, ProbeLoadsThisBuildsTracerWithItsCupti) {
  const TracerProbe p = probe_tracer(CHOKEPOINT_TEST_TRACER_LIB);
  ASSERT_TRUE(p.loads) << p.error;
  EXPECT_EQ(p.cupti_major, 13);
  EXPECT_EQ(p.cupti_soname, "libcupti.so.13");
  EXPECT_NE(p.cupti_path.find("libcupti.so.13"), std::string::npos) << p.cupti_path;
  EXPECT_GE(p.cupti_api_version, 130000u);
}

TEST(TracerSetup, ProbeWithACuptiThatIsNotThereNamesIt) {
  const TracerProbe p = probe_tracer(CHOKEPOINT_TEST_TRACER_LIB, "/nonexistent/nvidia/cu13/lib/libcupti.so.13");
  EXPECT_FALSE(p.loads);
  EXPECT_EQ(p.cupti_major, 13);
  EXPECT_NE(p.error.find("/nonexistent/nvidia/cu13/lib/libcupti.so.13"), std::string::npos) << p.error;
}
#endif

}  // namespace
}  // namespace chokepoint::tracer
