// cuBLASLt, loaded with dlopen when first needed. The module then needs only the CUDA
// driver to load; without cuBLASLt the GEMM testcases are waived with the reason and
// every other testcase still runs. The function types come from the toolkit's own
// cublasLt.h (decltype), so nothing is redeclared by hand.
#pragma once

#include <cublasLt.h>

#include <string>

namespace chokepoint::bench::gpu {

struct LtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) get_version = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) algo_config_get = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  std::string path;    // the file that was loaded
  size_t version = 0;  // cublasLtGetVersion(), e.g. 130100
};

// The loaded library, or nullptr with *why saying what was tried. Thread-compatible:
// called from the module's single thread.
const LtApi* cublaslt(std::string* why);

// "CUBLAS_STATUS_NOT_SUPPORTED" for a status.
std::string lt_status_text(cublasStatus_t s);

}  // namespace chokepoint::bench::gpu
