// Three kernels of known character for `chokepoint kernels --ncu` and the
// ncu CSV importer: a bf16 tensor-core GEMM (cuBLAS), a memory-bound axpy, a
// latency-bound kernel on a tiny grid and one whose occupancy is capped by
// shared memory. Built and profiled by gpu_ncu.sh on the H200.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                        \
  do {                                                                  \
    auto e = (x);                                                       \
    if (e != 0) {                                                       \
      std::fprintf(stderr, "%s failed: %d\n", #x, static_cast<int>(e)); \
      std::exit(1);                                                     \
    }                                                                   \
  } while (0)

__global__ void axpy(float a, const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    y[i] = a * x[i] + y[i];
}

// A dependent FMA chain on 4 blocks of 64 threads: latency-bound, tiny grid.
__global__ void tiny_grid_chain(float* out, int iters) {
  float v = threadIdx.x * 1e-3f;
  for (int i = 0; i < iters; ++i) v = v * 0.999f + 1e-4f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Many blocks of 32 threads, each holding 200 KB of shared memory: one block
// per SM, one warp of 64 resident: occupancy-limited by shared memory.
__global__ void smem_limited(const float* x, float* y, size_t n) {
  extern __shared__ float buf[];
  size_t base = blockIdx.x * size_t(4096);
  for (int i = threadIdx.x; i < 4096; i += blockDim.x)
    buf[i] = base + i < n ? x[base + i] : 0.f;
  __syncthreads();
  float s = 0;
  for (int i = threadIdx.x; i < 4096; i += blockDim.x) s += buf[(i * 7) % 4096];
  if (base + threadIdx.x < n) y[base + threadIdx.x] = s;
}

int main() {
  const int m = 8192;
  __nv_bfloat16 *a, *b, *c;
  CHECK(cudaMalloc(&a, size_t(m) * m * 2));
  CHECK(cudaMalloc(&b, size_t(m) * m * 2));
  CHECK(cudaMalloc(&c, size_t(m) * m * 2));
  CHECK(cudaMemset(a, 0, size_t(m) * m * 2));
  CHECK(cudaMemset(b, 0, size_t(m) * m * 2));
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  float one = 1, zero = 0;
  const size_t n = size_t(1) << 28;  // 1 GiB per float array
  float *x, *y;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  CHECK(cudaMemset(x, 0, n * 4));
  CHECK(cudaMemset(y, 0, n * 4));
  CHECK(cudaFuncSetAttribute(smem_limited, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             200 * 1024));
  for (int rep = 0; rep < 3; ++rep) {
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, CUDA_R_16BF, m, b,
                       CUDA_R_16BF, m, &zero, c, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
    axpy<<<132 * 16, 256>>>(2.f, x, y, n);
    tiny_grid_chain<<<4, 64>>>(y, 1 << 20);
    smem_limited<<<8192, 32, 200 * 1024>>>(x, y, n);
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGetLastError());
  std::puts("ok");
  return 0;
}
