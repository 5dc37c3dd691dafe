#include "bench/cuda/memory_kernels.h"

#include "bench/cuda/check.h"
#include "bench/cuda/timing.h"

namespace chokepoint::bench::gpu {
namespace {

constexpr int kThreads = 512;

__device__ inline unsigned fold(int4 v) {
  return static_cast<unsigned>(v.x) ^ static_cast<unsigned>(v.y) ^ static_cast<unsigned>(v.z) ^
         static_cast<unsigned>(v.w);
}

__device__ inline void reduce_into(unsigned acc, unsigned* sink) {
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicXor(sink, acc);
}

// Volatile so the compiler cannot hoist the loads out of the repetition loop; .cg caches
// in L2 only, so the L1 never serves them.
__device__ inline int4 load_cg(const int4* p) {
  int4 v;
  asm volatile("ld.global.cg.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__global__ void read_kernel(const int4* __restrict__ p, size_t n, unsigned* sink) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
  }
  for (; i < n; i += stride) acc ^= fold(p[i]);
  reduce_into(acc, sink);
}

__global__ void write_kernel(int4* __restrict__ p, size_t n, int v) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const int4 x = make_int4(v, v ^ 1, v ^ 2, v ^ 3);
  for (; i + 3 * stride < n; i += 4 * stride) {
    p[i] = x;
    p[i + stride] = x;
    p[i + 2 * stride] = x;
    p[i + 3 * stride] = x;
  }
  for (; i < n; i += stride) p[i] = x;
}

__global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__global__ void l2_read_kernel(const int4* __restrict__ p, size_t n, int reps, unsigned* sink) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (int r = 0; r < reps; ++r) {
    for (size_t i = first; i < n; i += 4 * stride) {
      const int4 a = load_cg(p + i), b = load_cg(p + i + stride), c = load_cg(p + i + 2 * stride),
                 d = load_cg(p + i + 3 * stride);
      acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
  }
  reduce_into(acc, sink);
}

template <typename Kernel>
LaunchShape shape_for(const Context& ctx, Kernel k) {
  preload_kernel(k);  // launched inside held batches
  int per_sm = 0;
  CP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, 0));
  if (per_sm <= 0) throw BenchError("occupancy query returned no resident blocks");
  return LaunchShape{per_sm * ctx.dev.sms, kThreads};
}

}  // namespace

LaunchShape read_shape(const Context& ctx) { return shape_for(ctx, read_kernel); }
LaunchShape write_shape(const Context& ctx) { return shape_for(ctx, write_kernel); }
LaunchShape copy_shape(const Context& ctx) { return shape_for(ctx, copy_kernel); }
LaunchShape l2_shape(const Context& ctx) { return shape_for(ctx, l2_read_kernel); }

void launch_read(const LaunchShape& sh, const int4* p, size_t n, unsigned* sink, cudaStream_t s) {
  read_kernel<<<sh.blocks, sh.threads, 0, s>>>(p, n, sink);
  CP_CUDA_LAUNCH();
}

void launch_write(const LaunchShape& sh, int4* p, size_t n, int v, cudaStream_t s) {
  write_kernel<<<sh.blocks, sh.threads, 0, s>>>(p, n, v);
  CP_CUDA_LAUNCH();
}

void launch_copy(const LaunchShape& sh, const int4* src, int4* dst, size_t n, cudaStream_t s) {
  copy_kernel<<<sh.blocks, sh.threads, 0, s>>>(src, dst, n);
  CP_CUDA_LAUNCH();
}

void launch_l2_read(const LaunchShape& sh, const int4* p, size_t n, int reps, unsigned* sink, cudaStream_t s) {
  l2_read_kernel<<<sh.blocks, sh.threads, 0, s>>>(p, n, reps, sink);
  CP_CUDA_LAUNCH();
}

size_t l2_elements(const LaunchShape& sh, size_t target_bytes) {
  const size_t unit = size_t{4} * sh.blocks * sh.threads;  // int4 elements per full sweep
  const size_t n = target_bytes / sizeof(int4) / unit * unit;
  return n > 0 ? n : unit;
}

}  // namespace chokepoint::bench::gpu
