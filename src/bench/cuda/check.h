// Error handling inside the benchmark module. Every CUDA call is checked; a failure
// throws, which ends the current testcase only ("failed" with the call, the error name
// and the place). Exceptions never cross the module's C interface (module_entry.cu).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace chokepoint::bench::gpu {

// The testcase failed: the message says which call and why.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The testcase cannot run here, found out while running (e.g. cuBLASLt offers no
// algorithm): reported as waived with the message, not as a failure.
class Waived : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  std::string f(file);
  if (auto slash = f.find_last_of('/'); slash != std::string::npos) f.erase(0, slash + 1);
  throw BenchError(std::string(expr) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " + f + ":" +
                   std::to_string(line));
}

// Throws for a failed CUDA call (the body of CP_CUDA).
inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda(e, expr, file, line);
}

}  // namespace chokepoint::bench::gpu

#define CP_CUDA(expr) ::chokepoint::bench::gpu::check_cuda((expr), #expr, __FILE__, __LINE__)

// After a kernel launch: launch-configuration errors surface here.
#define CP_CUDA_LAUNCH() CP_CUDA(cudaGetLastError())
