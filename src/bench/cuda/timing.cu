#include "bench/cuda/timing.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "bench/cuda/check.h"
#include "bench/cuda/resources.h"

namespace chokepoint::bench::gpu {
namespace {

// info[0]: 1 released, 2 timed out; info[1]: the flag value seen; info[2]: microseconds
// spent spinning (for the self-test's diagnosis).
__global__ void spin_kernel(const volatile int* flag, volatile int* info, uint64_t timeout_ns) {
  const uint64_t start = global_timer_ns();
  int seen = 0;
  int reason = 1;
  while ((seen = *flag) == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      reason = 2;
      break;
    }
    __nanosleep(256);  // poll gently: each read crosses PCIe
  }
  info[1] = seen;
  info[2] = static_cast<int>((global_timer_ns() - start) / 1000);
  info[0] = reason;
}

__global__ void clock_probe_kernel(unsigned long long* out, uint64_t ns) {
  const unsigned long long c0 = clock64();
  const uint64_t t0 = global_timer_ns();
  uint64_t t = t0;
  while ((t = global_timer_ns()) - t0 < ns) {
  }
  out[0] = clock64() - c0;
  out[1] = t - t0;
}

// One 64-bit random word per 8 bytes; the tail is filled bytewise from the next word.
__global__ void fill_random_kernel(uint8_t* p, size_t bytes, uint64_t seed) {
  const size_t words = bytes / 8;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words; i += stride) {
    reinterpret_cast<uint64_t*>(p)[i] = mix64(seed ^ (i * 0x100000001b3ull));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const uint64_t w = mix64(seed ^ (words * 0x100000001b3ull));
    for (size_t b = words * 8; b < bytes; ++b) p[b] = static_cast<uint8_t>(w >> (8 * (b - words * 8)));
  }
}

}  // namespace

BlockingWait::BlockingWait() {
  void* f = nullptr;
  void* t = nullptr;
  CP_CUDA(cudaHostAlloc(&f, sizeof(int), cudaHostAllocMapped));
  if (cudaHostAlloc(&t, 4 * sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
    cudaFreeHost(f);
    throw BenchError("cannot allocate mapped host memory for the blocking kernel");
  }
  flag_ = static_cast<volatile int*>(f);
  timeout_ = static_cast<volatile int*>(t);
  *flag_ = 0;
  for (int i = 0; i < 4; ++i) timeout_[i] = 0;
  CP_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev_), f, 0));
  CP_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timeout_dev_), t, 0));
  // Load the kernels now (lazy module loading would otherwise do it inside the first
  // held batch, see preload_kernel): the spin kernel runs once, released at once.
  preload_kernel(clock_probe_kernel);
  preload_kernel(fill_random_kernel);
  *flag_ = 1;
  spin_kernel<<<1, 1>>>(flag_dev_, timeout_dev_, kTimeoutNs);
  CP_CUDA_LAUNCH();
  CP_CUDA(cudaDeviceSynchronize());
  *flag_ = 0;
}

BlockingWait::~BlockingWait() {
  cudaFreeHost(const_cast<int*>(flag_));
  cudaFreeHost(const_cast<int*>(timeout_));
}

void BlockingWait::block(cudaStream_t s) {
  *flag_ = 0;
  for (int i = 0; i < 4; ++i) timeout_[i] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  spin_kernel<<<1, 1, 0, s>>>(flag_dev_, timeout_dev_, kTimeoutNs);
  CP_CUDA_LAUNCH();
}

void BlockingWait::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag_ = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool BlockingWait::timed_out() const { return timeout_[0] == 2; }

std::string BlockingWait::state() const {
  return "blocking kernel: exit " + std::to_string(timeout_[0]) + " (0 running, 1 released, 2 timed out), flag seen " +
         std::to_string(timeout_[1]) + ", spun " + std::to_string(timeout_[2]) + " us, host flag " +
         std::to_string(*flag_);
}

HeldBatch::HeldBatch(Context& ctx) : ctx_(ctx) { ctx.wait->block(ctx.stream); }

HeldBatch::~HeldBatch() {
  if (released_) return;
  ctx_.wait->release();
  (void)cudaDeviceSynchronize();  // errors surface in the next checked call
}

void HeldBatch::release() {
  ctx_.wait->release();
  released_ = true;
}

double probe_sm_clock_mhz(cudaStream_t s, int us) {
  DeviceBuffer out(2 * sizeof(unsigned long long));
  clock_probe_kernel<<<1, 1, 0, s>>>(out.as<unsigned long long>(), static_cast<uint64_t>(us) * 1000);
  CP_CUDA_LAUNCH();
  unsigned long long v[2] = {0, 0};
  CP_CUDA(cudaMemcpyAsync(v, out.get(), sizeof(v), cudaMemcpyDeviceToHost, s));
  CP_CUDA(cudaStreamSynchronize(s));
  return v[1] > 0 ? static_cast<double>(v[0]) / static_cast<double>(v[1]) * 1e3 : -1;
}

double time_batch_ms(Context& ctx, const std::function<void(cudaStream_t)>& enqueue) {
  Event start, stop;
  HeldBatch held(ctx);
  CP_CUDA(cudaEventRecord(start.get(), ctx.stream));
  enqueue(ctx.stream);
  CP_CUDA(cudaEventRecord(stop.get(), ctx.stream));
  held.release();
  CP_CUDA(cudaEventSynchronize(stop.get()));
  if (ctx.wait->timed_out()) {
    throw BenchError("the blocking kernel timed out before the batch was enqueued; timing discarded (" +
                     ctx.wait->state() + ")");
  }
  float ms = 0;
  CP_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  if (ms <= 0) throw BenchError("event timer returned " + std::to_string(ms) + " ms for a batch");
  return ms;
}

std::vector<double> repeat_runs(const Context& ctx, const std::function<double()>& measure) {
  for (int i = 0; i < ctx.warmups; ++i) (void)measure();
  std::vector<double> out;
  out.reserve(ctx.runs);
  for (int i = 0; i < ctx.runs; ++i) out.push_back(measure());
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void fill_random_bytes(void* dev, size_t bytes, uint64_t seed, cudaStream_t s) {
  fill_random_kernel<<<1024, 256, 0, s>>>(static_cast<uint8_t*>(dev), bytes, seed);
  CP_CUDA_LAUNCH();
}

void fill_random_bytes_host(void* host, size_t bytes, uint64_t seed) {
  auto* p = static_cast<uint8_t*>(host);
  const size_t words = bytes / 8;
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = mix64(seed ^ (i * 0x100000001b3ull));
    std::memcpy(p + i * 8, &w, 8);
  }
  const uint64_t w = mix64(seed ^ (words * 0x100000001b3ull));
  for (size_t b = words * 8; b < bytes; ++b) p[b] = static_cast<uint8_t>(w >> (8 * (b - words * 8)));
}

size_t Context::free_bytes() const {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
  return free;
}

std::string memory_waiver(const Context& ctx, size_t bytes) {
  // Headroom for cuBLASLt workspaces and the allocator's rounding.
  constexpr size_t kHeadroom = size_t{256} << 20;
  const size_t free = ctx.free_bytes();
  if (free >= bytes + kHeadroom) return {};
  return "needs " + std::to_string((bytes + kHeadroom) >> 20) + " MiB of device memory, " + std::to_string(free >> 20) +
         " MiB free";
}

}  // namespace chokepoint::bench::gpu
