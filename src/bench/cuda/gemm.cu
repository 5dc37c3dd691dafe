#include "bench/cuda/gemm.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>

#include "bench/cuda/check.h"
#include "bench/cuda/timing.h"

namespace chokepoint::bench::gpu {
namespace {

// 64 MiB: what cuBLAS recommends for Hopper (split-K and stream-K kernels need it).
constexpr size_t kWorkspace = size_t{64} << 20;
constexpr int kHeuristicCandidates = 8;
constexpr size_t kScaleStride = 64;  // floats between the A and B scale: 256 bytes

const PrecisionSpec kSpecs[kGemmCount] = {
    {"fp32", "FP32 in/out, FP32 compute (CUDA cores)", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 50, 4, 4,
     "TFLOP/s", 1e-6, 1e-5},
    {"tf32", "FP32 in/out, TF32 tensor cores", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 80, 4,
     4, "TFLOP/s", 1e-6, 2.5e-3},
    {"fp16", "FP16 in/out, FP32 accumulate", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 70, 2, 2,
     "TFLOP/s", 7.5e-4, 1e-4},
    {"bf16", "BF16 in/out, FP32 accumulate", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 80, 2, 2,
     "TFLOP/s", 6e-3, 1e-4},
    {"fp8", "FP8 E4M3 in, BF16 out, FP32 accumulate", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 89,
     1, 2, "TFLOP/s", 6e-3, 2e-3},
    {"int8", "INT8 in, INT32 accumulate and out", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 75, 1, 4,
     "TOP/s", 0, 0},
};

// Uniform in [-1, 1): random data, not zeros (tensor cores run faster on zeros).
__device__ inline float uniform(uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
}

template <typename T>
__device__ inline T convert(uint64_t bits);
template <>
__device__ inline float convert<float>(uint64_t bits) {
  return uniform(bits);
}
template <>
__device__ inline __half convert<__half>(uint64_t bits) {
  return __float2half_rn(uniform(bits));
}
template <>
__device__ inline __nv_bfloat16 convert<__nv_bfloat16>(uint64_t bits) {
  return __float2bfloat16_rn(uniform(bits));
}
template <>
__device__ inline __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(uint64_t bits) {
  return __nv_fp8_e4m3(uniform(bits));
}
template <>
__device__ inline int8_t convert<int8_t>(uint64_t bits) {
  return static_cast<int8_t>(static_cast<int>(bits & 127) - 64);
}

template <typename T>
__global__ void fill_typed(T* p, size_t n, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    p[i] = convert<T>(mix64(seed ^ (i * 0x9e3779b97f4a7c15ull)));
  }
}

void fill(void* p, cudaDataType_t t, size_t n, uint64_t seed, cudaStream_t s) {
  switch (t) {
    case CUDA_R_32F: fill_typed<<<1024, 256, 0, s>>>(static_cast<float*>(p), n, seed); break;
    case CUDA_R_16F: fill_typed<<<1024, 256, 0, s>>>(static_cast<__half*>(p), n, seed); break;
    case CUDA_R_16BF: fill_typed<<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed); break;
    case CUDA_R_8F_E4M3: fill_typed<<<1024, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed); break;
    case CUDA_R_8I: fill_typed<<<1024, 256, 0, s>>>(static_cast<int8_t*>(p), n, seed); break;
    default: throw BenchError("no random fill for this data type");
  }
  CP_CUDA_LAUNCH();
}

// Element idx of a host copy of device data of type t, as a double (exact for every
// type used here).
double decode(const std::vector<uint8_t>& buf, size_t idx, cudaDataType_t t) {
  const void* p = buf.data();
  switch (t) {
    case CUDA_R_32F: return static_cast<const float*>(p)[idx];
    case CUDA_R_16F: return __half2float(static_cast<const __half*>(p)[idx]);
    case CUDA_R_16BF: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[idx]);
    case CUDA_R_8F_E4M3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[idx]);
    case CUDA_R_8I: return static_cast<const int8_t*>(p)[idx];
    case CUDA_R_32I: return static_cast<const int32_t*>(p)[idx];
    default: return NAN;
  }
}

std::vector<uint8_t> copy_out(const void* dev, size_t offset, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  CP_CUDA(cudaMemcpy(out.data(), static_cast<const uint8_t*>(dev) + offset, bytes, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

const PrecisionSpec& precision_spec(int p) { return kSpecs[p]; }

LtGemm::LtGemm(const LtApi& lt, int precision, int m, int n, int k, cudaStream_t s)
    : lt_(lt), spec_(kSpecs[precision]), m_(m), n_(n), k_(k) {
  auto check = [this](cublasStatus_t st, const char* what) {
    if (st == CUBLAS_STATUS_SUCCESS) return;
    throw BenchError(std::string(what) + " (" + spec_.name + "): " + lt_status_text(st));
  };
  try {
    a_ = DeviceBuffer(static_cast<size_t>(k) * m * spec_.ab_bytes);
    b_ = DeviceBuffer(static_cast<size_t>(k) * n * spec_.ab_bytes);
    d_ = DeviceBuffer(static_cast<size_t>(m) * n * spec_.cd_bytes);
    workspace_ = DeviceBuffer(kWorkspace);
    scales_ = DeviceBuffer(2 * kScaleStride * sizeof(float));
    fill(a_.get(), spec_.ab_type, static_cast<size_t>(k) * m, 31, s);
    fill(b_.get(), spec_.ab_type, static_cast<size_t>(k) * n, 32, s);
    CP_CUDA(cudaMemsetAsync(d_.get(), 0, d_.bytes(), s));
    const std::vector<float> ones(2 * kScaleStride, 1.0f);
    CP_CUDA(cudaMemcpyAsync(scales_.get(), ones.data(), scales_.bytes(), cudaMemcpyHostToDevice, s));
    CP_CUDA(cudaStreamSynchronize(s));

    check(lt_.create(&handle_), "cublasLtCreate");
    check(lt_.layout_create(&a_layout_, spec_.ab_type, k, m, k), "layout A");
    check(lt_.layout_create(&b_layout_, spec_.ab_type, k, n, k), "layout B");
    check(lt_.layout_create(&d_layout_, spec_.cd_type, m, n, m), "layout D");
    const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    // FP8: per-tensor scale pointers (1.0 here) as FP8 recipes use them, and fast
    // accumulation, the forward-pass setting and the peak the datasheet quotes. Some
    // cuBLASLt builds offer candidates for a combination that cublasLtMatmul then
    // rejects (cuBLASLt 13.1 on H200 rejected every scale-pointer candidate), so each
    // combination is tried in turn and the note says which one ran.
    struct Variant {
      bool scales, fast;
      const char* text;
    };
    std::vector<Variant> variants = {{false, false, ""}};
    if (spec_.ab_type == CUDA_R_8F_E4M3) {
      variants = {{true, true, "scale pointers + fast accumulation"},
                  {false, true, "fast accumulation (scale pointers unsupported here)"},
                  {true, false, "scale pointers (fast accumulation unsupported here)"},
                  {false, false, "plain (scale pointers and fast accumulation unsupported here)"}};
    }
    std::string tried;
    for (const Variant& v : variants) {
      if (desc_ != nullptr) lt_.desc_destroy(desc_);
      desc_ = nullptr;
      algos_.clear();
      check(lt_.desc_create(&desc_, spec_.compute, spec_.scale_type), "cublasLtMatmulDescCreate");
      const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
      check(lt_.desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "set TRANSA");
      check(lt_.desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "set TRANSB");
      if (v.scales) {
        const void* sa = scales_.as<float>();
        const void* sb = scales_.as<float>() + kScaleStride;  // each scale 256-byte aligned
        check(lt_.desc_set(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof(sa)), "set A_SCALE_POINTER");
        check(lt_.desc_set(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof(sb)), "set B_SCALE_POINTER");
      }
      if (v.fast) {
        const int8_t fast = 1;
        check(lt_.desc_set(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)), "set FAST_ACCUM");
      }
      cublasLtMatmulPreference_t pref = nullptr;
      check(lt_.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
      const uint64_t ws = kWorkspace;
      cublasStatus_t st = lt_.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
      std::vector<cublasLtMatmulHeuristicResult_t> results(kHeuristicCandidates);
      int returned = 0;
      if (st == CUBLAS_STATUS_SUCCESS) {
        st = lt_.heuristic(handle_, desc_, a_layout_, b_layout_, d_layout_, d_layout_, pref, kHeuristicCandidates,
                           results.data(), &returned);
      }
      lt_.pref_destroy(pref);
      const std::string label = std::string(spec_.name) + (v.text[0] ? std::string(" with ") + v.text : "");
      if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED) check(st, "cublasLtMatmulAlgoGetHeuristic");
      for (int i = 0; i < returned && st == CUBLAS_STATUS_SUCCESS; ++i) {
        if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= kWorkspace) {
          algos_.push_back(results[i]);
        }
      }
      if (algos_.empty()) {
        tried += (tried.empty() ? "" : "; ") + label + ": no algorithm";
        continue;
      }
      if (variants.size() > 1) {  // keep only this combination if a candidate really runs
        bool ran = false;
        std::string why;
        for (int i = 0; i < algo_count() && !ran; ++i) {
          const cublasStatus_t r = enqueue(i, s);
          ran = r == CUBLAS_STATUS_SUCCESS;
          if (!ran) why = lt_status_text(r);
        }
        CP_CUDA(cudaStreamSynchronize(s));
        if (!ran) {
          tried += (tried.empty() ? "" : "; ") + label + ": " + std::to_string(algo_count()) +
                   " candidates, all rejected (" + why + ")";
          algos_.clear();
          continue;
        }
      }
      variant_ = v.text;
      break;
    }
    if (algos_.empty()) {
      throw Waived(std::string("cuBLASLt offers no ") + spec_.name + " algorithm that runs a " + shape +
                   " TN multiply on this GPU (" + tried + ")");
    }
  } catch (...) {
    release();  // the destructor does not run for a throwing constructor
    throw;
  }
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() {
  if (d_layout_ != nullptr) lt_.layout_destroy(d_layout_);
  if (b_layout_ != nullptr) lt_.layout_destroy(b_layout_);
  if (a_layout_ != nullptr) lt_.layout_destroy(a_layout_);
  if (desc_ != nullptr) lt_.desc_destroy(desc_);
  if (handle_ != nullptr) lt_.destroy(handle_);
  d_layout_ = b_layout_ = a_layout_ = nullptr;
  desc_ = nullptr;
  handle_ = nullptr;
}

cublasStatus_t LtGemm::enqueue(int i, cudaStream_t s) {
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  const bool int_scale = spec_.scale_type == CUDA_R_32I;
  const void* alpha = int_scale ? static_cast<const void*>(&alpha_i) : static_cast<const void*>(&alpha_f);
  const void* beta = int_scale ? static_cast<const void*>(&beta_i) : static_cast<const void*>(&beta_f);
  return lt_.matmul(handle_, desc_, alpha, a_.get(), a_layout_, b_.get(), b_layout_, beta, d_.get(), d_layout_,
                    d_.get(), d_layout_, &algos_[i].algo, workspace_.get(), kWorkspace, s);
}

void LtGemm::enqueue_or_throw(int i, cudaStream_t s) {
  const cublasStatus_t st = enqueue(i, s);
  if (st != CUBLAS_STATUS_SUCCESS) {
    throw BenchError(std::string("cublasLtMatmul (") + spec_.name + ", " + algo_text(i) + "): " + lt_status_text(st));
  }
}

std::string LtGemm::algo_text(int i) const {
  int32_t id = -1, tile = -1;
  lt_.algo_config_get(&algos_[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), nullptr);
  lt_.algo_config_get(&algos_[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), nullptr);
  return "algo " + std::to_string(id) + " tile " + std::to_string(tile) + " (candidate " + std::to_string(i + 1) +
         " of " + std::to_string(algos_.size()) + "), workspace " + std::to_string(algos_[i].workspaceSize >> 20) +
         " MiB" + (variant_.empty() ? "" : ", " + variant_);
}

std::vector<std::pair<int, int>> LtGemm::sample_cells(int count) const {
  std::vector<std::pair<int, int>> cells = {{0, 0}, {m_ - 1, n_ - 1}, {0, n_ - 1}, {m_ - 1, 0}};
  for (int i = 0; static_cast<int>(cells.size()) < count; ++i) {
    const uint64_t r = mix64(0xce11 + i);
    cells.emplace_back(static_cast<int>(r % m_), static_cast<int>((r >> 32) % n_));
  }
  return cells;
}

Validation LtGemm::validate(const std::vector<std::pair<int, int>>& requested) const {
  std::vector<std::pair<int, int>> cells = requested;
  if (cells.empty()) {
    for (int j = 0; j < n_; ++j) {
      for (int i = 0; i < m_; ++i) cells.emplace_back(i, j);
    }
  }
  const size_t col_a = static_cast<size_t>(k_) * spec_.ab_bytes;  // column i of stored A = row i of A^T
  std::map<int, std::vector<uint8_t>> a_cols, b_cols;
  for (const auto& [i, j] : cells) {
    if (!a_cols.count(i)) a_cols[i] = copy_out(a_.get(), static_cast<size_t>(i) * col_a, col_a);
    if (!b_cols.count(j)) b_cols[j] = copy_out(b_.get(), static_cast<size_t>(j) * col_a, col_a);
  }
  // Whole D when small, else one element per cell.
  const bool whole_d = d_.bytes() <= (size_t{64} << 20);
  std::vector<uint8_t> d_all = whole_d ? copy_out(d_.get(), 0, d_.bytes()) : std::vector<uint8_t>();
  Validation v;
  for (const auto& [i, j] : cells) {
    const auto& a = a_cols[i];
    const auto& b = b_cols[j];
    double ref = 0, mag = 0;
    for (int kk = 0; kk < k_; ++kk) {
      const double p = decode(a, kk, spec_.ab_type) * decode(b, kk, spec_.ab_type);
      ref += p;
      mag += std::fabs(p);
    }
    const size_t didx = static_cast<size_t>(i) + static_cast<size_t>(j) * m_;
    double got;
    if (whole_d) {
      got = decode(d_all, didx, spec_.cd_type);
    } else {
      got = decode(copy_out(d_.get(), didx * spec_.cd_bytes, spec_.cd_bytes), 0, spec_.cd_type);
    }
    const double bound = spec_.out_rel * std::fabs(ref) + spec_.acc_rel * mag;
    const double err = std::fabs(got - ref);
    const double ratio = std::isfinite(got) ? (err == 0 ? 0 : err / std::max(bound, 1e-300)) : INFINITY;
    ++v.checked;
    if (ratio > v.worst_ratio || v.worst_cell.empty()) {
      v.worst_ratio = std::max(v.worst_ratio, ratio);
      char buf[128];
      std::snprintf(buf, sizeof(buf), "D[%d,%d] = %.6g, expected %.6g (bound %.3g)", i, j, got, ref, bound);
      v.worst_cell = buf;
    }
  }
  return v;
}

}  // namespace chokepoint::bench::gpu
