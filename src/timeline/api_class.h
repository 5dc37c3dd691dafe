// What a CUDA runtime/driver API call does, from its name (versions suffixes such as
// "_v7000" and "_ptsz" are ignored). Used to tell launches from synchronizations,
// allocations and copies.
#pragma once

#include <cstdint>
#include <string_view>

namespace chokepoint::timeline {

enum class ApiClass : uint8_t {
  kLaunch,       // cudaLaunchKernel*, cuLaunchKernel*, cudaLaunchCooperativeKernel
  kGraphLaunch,  // cudaGraphLaunch, cuGraphLaunch
  kMemcpyAsync,  // cudaMemcpyAsync & co (may still block for pageable memory)
  kMemset,       // cudaMemset*, cuMemset*
  kSync,         // blocks the host until the device catches up: *Synchronize, cudaMemcpy
                 // (synchronous), cudaEventQuery is NOT one
  kAlloc,        // cudaMalloc*, cuMemAlloc*, cudaHostAlloc, cudaMallocHost
  kFree,         // cudaFree*, cuMemFree*, cudaFreeHost (cudaFree also synchronizes)
  kOther,
};

ApiClass classify_api(std::string_view name);
const char* api_class_name(ApiClass c);

inline bool is_launch(ApiClass c) { return c == ApiClass::kLaunch || c == ApiClass::kGraphLaunch; }
inline bool is_allocator(ApiClass c) { return c == ApiClass::kAlloc || c == ApiClass::kFree; }

}  // namespace chokepoint::timeline
