#include "timeline/api_class.h"

namespace chokepoint::timeline {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// "cudaMemcpyAsync_v3020" -> "cudaMemcpyAsync"; "cudaMemcpy_ptds" -> "cudaMemcpy".
std::string_view strip_suffix(std::string_view n) {
  for (std::string_view suf : {"_ptsz", "_ptds"}) {
    auto p = n.find(suf);
    if (p != std::string_view::npos) n = n.substr(0, p);
  }
  auto v = n.rfind("_v");
  if (v != std::string_view::npos && v + 2 < n.size()) {
    bool digits = true;
    for (size_t i = v + 2; i < n.size(); ++i) digits &= n[i] >= '0' && n[i] <= '9';
    if (digits) n = n.substr(0, v);
  }
  return n;
}

}  // namespace

ApiClass classify_api(std::string_view raw) {
  std::string_view n = strip_suffix(raw);
  if (contains(n, "GraphLaunch")) return ApiClass::kGraphLaunch;
  if (contains(n, "LaunchKernel") || contains(n, "LaunchCooperativeKernel") || n == "cudaLaunch") {
    return ApiClass::kLaunch;
  }
  if (contains(n, "Synchronize")) return ApiClass::kSync;  // Device/Stream/Event/Ctx
  if (starts_with(n, "cudaMemset") || starts_with(n, "cuMemset")) return ApiClass::kMemset;
  if (starts_with(n, "cudaMemcpy") || starts_with(n, "cuMemcpy")) {
    // Without "Async" the copy returns only when done: the host blocks on the device.
    return contains(n, "Async") ? ApiClass::kMemcpyAsync : ApiClass::kSync;
  }
  // Stream-ordered allocation (cudaMallocAsync/cudaFreeAsync) neither blocks nor syncs.
  if (contains(n, "Async")) return ApiClass::kOther;
  if (starts_with(n, "cudaFree") || starts_with(n, "cuMemFree")) return ApiClass::kFree;
  if (starts_with(n, "cudaMalloc") || starts_with(n, "cuMemAlloc") || n == "cudaHostAlloc" || n == "cuMemHostAlloc") {
    return ApiClass::kAlloc;
  }
  return ApiClass::kOther;
}

const char* api_class_name(ApiClass c) {
  switch (c) {
    case ApiClass::kLaunch: return "launch";
    case ApiClass::kGraphLaunch: return "graph_launch";
    case ApiClass::kMemcpyAsync: return "memcpy_async";
    case ApiClass::kMemset: return "memset";
    case ApiClass::kSync: return "sync";
    case ApiClass::kAlloc: return "alloc";
    case ApiClass::kFree: return "free";
    case ApiClass::kOther: return "other";
  }
  return "other";
}

}  // namespace chokepoint::timeline
