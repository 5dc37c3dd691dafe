// Finds and loads the GPU benchmark module (module_api.h) at run time, so that the CLI
// has no link-time dependency on CUDA. Search order:
//   1. $CHOKEPOINT_BENCH_MODULE (a path to the .so)
//   2. the directory of the running executable (the build tree puts it there)
//   3. <exe dir>/../lib/chokepoint/ and <exe dir>/../lib/ (installed layout)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace chokepoint::bench {

inline constexpr const char* kModuleEnvVar = "CHOKEPOINT_BENCH_MODULE";

// Where to look, in order (explicit env path first). exe_dir "" means /proc/self/exe.
std::vector<std::string> module_candidates(const std::string& exe_dir = "");

using ProgressFn = std::function<void(int done, int total, const std::string& label)>;

// A loaded module. Not copyable; dlclose never runs (CUDA's static runtime registers
// exit handlers inside the module, so unloading it before exit would crash).
class BenchModule {
 public:
  // Loads the first candidate that exists. The error says where it looked, or which
  // file failed to load and why (dlerror), or that it is not a compatible module.
  static Result<std::unique_ptr<BenchModule>> load(const std::vector<std::string>& candidates);
  static Result<std::unique_ptr<BenchModule>> load_default() { return load(module_candidates()); }

  // Runs the module with the given options JSON; returns its result JSON. The returned
  // status is an error only when the module could not be called; a result holding
  // "error" (no GPU) is returned as text for the caller to parse.
  Result<std::string> run(const std::string& options_json, const ProgressFn& progress, int* rc) const;

  const std::string& path() const { return path_; }

 private:
  BenchModule() = default;
  std::string path_;
  void* handle_ = nullptr;
  void* run_ = nullptr;
  void* free_ = nullptr;
};

}  // namespace chokepoint::bench
