#include "bench/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace chokepoint::bench::gpu {
namespace {

#define CP_STR2(x) #x
#define CP_STR(x) CP_STR2(x)

// The soname of the cuBLASLt this module was compiled against: the ABI is stable within
// a major version only.
constexpr const char* kSoname = "libcublasLt.so." CP_STR(CUBLAS_VER_MAJOR);

struct Loaded {
  bool tried = false;
  LtApi api;
  std::string why;
  bool ok = false;
};

template <typename Fn>
bool bind(void* h, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(h, name));
  if (*out == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *out != nullptr;
}

void load(Loaded& l) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CHOKEPOINT_CUBLASLT"); env != nullptr && env[0] != '\0') {
    candidates.emplace_back(env);
  }
  candidates.emplace_back(kSoname);  // LD_LIBRARY_PATH, ld.so.cache, the module's RUNPATH
#ifdef CHOKEPOINT_CUDA_LIBDIR
  candidates.emplace_back(std::string(CHOKEPOINT_CUDA_LIBDIR) + "/" + kSoname);  // the build's toolkit
#endif
  std::string errors;
  void* h = nullptr;
  for (const auto& c : candidates) {
    h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      l.api.path = c;
      break;
    }
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e != nullptr ? e : c);
  }
  if (h == nullptr) {
    l.why = std::string(kSoname) + " not found (" + errors + "); install cuBLAS or set CHOKEPOINT_CUBLASLT to its path";
    return;
  }
  LtApi& a = l.api;
  std::string missing;
  bind(h, "cublasLtCreate", &a.create, &missing);
  bind(h, "cublasLtDestroy", &a.destroy, &missing);
  bind(h, "cublasLtGetVersion", &a.get_version, &missing);
  bind(h, "cublasLtGetStatusString", &a.status_string, &missing);
  bind(h, "cublasLtMatmulDescCreate", &a.desc_create, &missing);
  bind(h, "cublasLtMatmulDescDestroy", &a.desc_destroy, &missing);
  bind(h, "cublasLtMatmulDescSetAttribute", &a.desc_set, &missing);
  bind(h, "cublasLtMatrixLayoutCreate", &a.layout_create, &missing);
  bind(h, "cublasLtMatrixLayoutDestroy", &a.layout_destroy, &missing);
  bind(h, "cublasLtMatmulPreferenceCreate", &a.pref_create, &missing);
  bind(h, "cublasLtMatmulPreferenceDestroy", &a.pref_destroy, &missing);
  bind(h, "cublasLtMatmulPreferenceSetAttribute", &a.pref_set, &missing);
  bind(h, "cublasLtMatmulAlgoGetHeuristic", &a.heuristic, &missing);
  bind(h, "cublasLtMatmulAlgoConfigGetAttribute", &a.algo_config_get, &missing);
  bind(h, "cublasLtMatmul", &a.matmul, &missing);
  if (!missing.empty()) {
    l.why = l.api.path + " lacks " + missing;
    return;
  }
  a.version = a.get_version();
  if (a.version / 10000 != CUBLAS_VER_MAJOR) {
    l.why = l.api.path + " is version " + std::to_string(a.version) + ", this module needs major " +
            CP_STR(CUBLAS_VER_MAJOR);
    return;
  }
  l.ok = true;
}

}  // namespace

const LtApi* cublaslt(std::string* why) {
  static Loaded l;
  if (!l.tried) {
    l.tried = true;
    load(l);
  }
  if (!l.ok) {
    if (why != nullptr) *why = l.why;
    return nullptr;
  }
  return &l.api;
}

std::string lt_status_text(cublasStatus_t s) {
  const LtApi* a = cublaslt(nullptr);
  if (a != nullptr && a->status_string != nullptr) return a->status_string(s);
  return "cublasStatus " + std::to_string(static_cast<int>(s));
}

}  // namespace chokepoint::bench::gpu
