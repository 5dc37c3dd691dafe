#include "bench/module_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "bench/module_api.h"

namespace chokepoint::bench {
namespace {

std::string exe_directory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return exe.parent_path().string();
}

struct ProgressTrampoline {
  const ProgressFn* fn;
  static void call(void* ctx, int done, int total, const char* label) {
    auto* t = static_cast<ProgressTrampoline*>(ctx);
    // Exceptions must not unwind through the module's C frames.
    try {
      if (t->fn != nullptr && *t->fn) (*t->fn)(done, total, label != nullptr ? label : "");
    } catch (...) {
    }
  }
};

}  // namespace

std::vector<std::string> module_candidates(const std::string& exe_dir) {
  std::vector<std::string> out;
  if (const char* env = std::getenv(kModuleEnvVar); env != nullptr && env[0] != '\0') {
    out.emplace_back(env);
    return out;  // an explicit path is the only one tried: no surprise fallbacks
  }
  const std::string dir = exe_dir.empty() ? exe_directory() : exe_dir;
  out.push_back(dir + "/" + CHOKEPOINT_BENCH_MODULE_NAME);
  out.push_back(dir + "/../lib/chokepoint/" + CHOKEPOINT_BENCH_MODULE_NAME);
  out.push_back(dir + "/../lib/" + CHOKEPOINT_BENCH_MODULE_NAME);
  return out;
}

Result<std::unique_ptr<BenchModule>> BenchModule::load(const std::vector<std::string>& candidates) {
  std::string found;
  std::error_code ec;
  for (const auto& c : candidates) {
    if (std::filesystem::is_regular_file(c, ec)) {
      found = c;
      break;
    }
  }
  if (found.empty()) {
    if (const char* env = std::getenv(kModuleEnvVar); env != nullptr && env[0] != '\0') {
      return Status::Error(std::string(kModuleEnvVar) + "=" + env + " names no file");
    }
    std::string where;
    for (const auto& c : candidates) where += (where.empty() ? "" : ", ") + c;
    return Status::Error(std::string("the GPU benchmark module ") + CHOKEPOINT_BENCH_MODULE_NAME +
                         " was not found (looked in: " + where +
                         "); this chokepoint was built without the CUDA toolkit");
  }
  // RTLD_LOCAL: the module's static CUDA runtime stays private to it.
  void* h = dlopen(found.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    return Status::Error("cannot load the GPU benchmark module " + found + ": " +
                         (e != nullptr ? e : "unknown dlopen error"));
  }
  auto abi = reinterpret_cast<chokepoint_bench_abi_version_fn>(dlsym(h, "chokepoint_bench_abi_version"));
  void* run = dlsym(h, "chokepoint_bench_run");
  void* fr = dlsym(h, "chokepoint_bench_free");
  if (abi == nullptr || run == nullptr || fr == nullptr) {
    dlclose(h);  // no CUDA code ran in it
    return Status::Error(found + " is not a chokepoint benchmark module (missing entry points)");
  }
  if (const int v = abi(); v != CHOKEPOINT_BENCH_ABI_VERSION) {
    dlclose(h);
    return Status::Error(found + " has interface version " + std::to_string(v) + ", this chokepoint needs " +
                         std::to_string(CHOKEPOINT_BENCH_ABI_VERSION) + " (rebuild both together)");
  }
  std::unique_ptr<BenchModule> m(new BenchModule());
  m->path_ = found;
  m->handle_ = h;
  m->run_ = run;
  m->free_ = fr;
  return m;
}

Result<std::string> BenchModule::run(const std::string& options_json, const ProgressFn& progress, int* rc) const {
  auto run = reinterpret_cast<chokepoint_bench_run_fn>(run_);
  auto fr = reinterpret_cast<chokepoint_bench_free_fn>(free_);
  ProgressTrampoline t{&progress};
  char* out = nullptr;
  const int code = run(options_json.c_str(), &ProgressTrampoline::call, &t, &out);
  if (rc != nullptr) *rc = code;
  if (out == nullptr) {
    return Status::Error("the GPU benchmark module returned no result (code " + std::to_string(code) + ")");
  }
  std::string text(out);
  fr(out);
  return text;
}

}  // namespace chokepoint::bench
