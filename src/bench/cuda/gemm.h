// One cuBLASLt matrix multiply D = A^T B ("TN": A stored k x m, B stored k x n, both
// column-major with the k dimension contiguous; D m x n column-major). TN is the layout
// FP8 and INT8 tensor-core kernels require, and it serves every precision, so all share
// one code path and one validation.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "bench/cuda/cublaslt_api.h"
#include "bench/cuda/resources.h"

namespace chokepoint::bench::gpu {

enum GemmPrecision { kGemmFp32 = 0, kGemmTf32, kGemmFp16, kGemmBf16, kGemmFp8, kGemmInt8, kGemmCount };

struct PrecisionSpec {
  const char* name;   // "bf16"
  const char* label;  // "BF16 inputs, FP32 accumulate, BF16 output"
  cudaDataType_t ab_type, cd_type;
  cublasComputeType_t compute;
  cudaDataType_t scale_type;
  int min_cc;                 // 10 x major + minor
  size_t ab_bytes, cd_bytes;  // element sizes
  const char* unit;           // "TFLOP/s" or "TOP/s"
  // Validation bound: |d - ref| <= out_rel * |ref| + acc_rel * sum_k |a_k b_k|.
  // out_rel covers rounding of the output type, acc_rel the inputs' conversion
  // (TF32) and accumulation order or precision (FP8 fast accumulation).
  double out_rel, acc_rel;
};

const PrecisionSpec& precision_spec(int p);

struct Validation {
  int checked = 0;
  double worst_ratio = 0;  // max over cells of error / bound; <= 1 passes
  std::string worst_cell;  // "D[12,7] = 3.1 expected 3.2"
};

class LtGemm {
 public:
  // Allocates A, B, D, fills A and B with random values of the type, describes the
  // multiply and asks the heuristic for up to 8 algorithms. Throws Waived when cuBLASLt
  // has none for this precision/shape on this GPU, BenchError on any failed call.
  LtGemm(const LtApi& lt, int precision, int m, int n, int k, cudaStream_t s);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  int algo_count() const { return static_cast<int>(algos_.size()); }
  // Enqueues one multiply with candidate i; returns the cuBLASLt status (no throw:
  // the caller may try the next candidate on CUBLAS_STATUS_NOT_SUPPORTED).
  cublasStatus_t enqueue(int i, cudaStream_t s);
  void enqueue_or_throw(int i, cudaStream_t s);
  // "algo 21 (candidate 1 of 8), workspace 32 MiB".
  std::string algo_text(int i) const;

  double ops() const { return 2.0 * m_ * n_ * k_; }
  const PrecisionSpec& spec() const { return spec_; }

  // Compares D with a double-precision CPU dot product at the given (row, col) cells;
  // all cells when cells is empty. Call after the last multiply completed.
  Validation validate(const std::vector<std::pair<int, int>>& cells) const;

  // Pseudo-random cells including the corners, for large matrices.
  std::vector<std::pair<int, int>> sample_cells(int count) const;

 private:
  void release();  // cuBLASLt objects (device buffers free themselves)

  const LtApi& lt_;
  const PrecisionSpec& spec_;
  int m_, n_, k_;
  DeviceBuffer a_, b_, d_, workspace_, scales_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
  std::string variant_;  // FP8: which scale / accumulation settings ran
};

}  // namespace chokepoint::bench::gpu
