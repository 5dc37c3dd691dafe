// Helpers of the end-to-end tests of `chokepoint run`, `watch` and `trace`
// (run_cli_test.cc, run_lifecycle_cli_test.cc, trace_watch_cli_test.cc): the binary,
// a fresh directory per test, and one command run through the shell with its output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace chokepoint::run_cli_test {

inline const std::string kExe = CHOKEPOINT_BINARY;

struct Output {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/run_cli_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// No NVML unless the test names one: CI has no driver, and a developer's GPU must not
// change the results.
inline Output run(const std::string& dir, const std::string& args,
                  const std::string& env = "CHOKEPOINT_NVML_LIB=/nonexistent/libnvidia-ml.so.1") {
  const std::string so = dir + "/stdout", se = dir + "/stderr";
  const std::string cmd = "NO_COLOR=1 CHOKEPOINT_PROFILE=none " + env + " " + kExe + " " + args + " >" + so + " 2>" +
                          se + " </dev/null";
  const int status = std::system(cmd.c_str());
  Output o;
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(so);
  o.err = slurp(se);
  return o;
}

inline nlohmann::json report_json(const std::string& path) { return nlohmann::json::parse(slurp(path)); }

}  // namespace chokepoint::run_cli_test
