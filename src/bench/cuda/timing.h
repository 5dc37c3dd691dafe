// Timing method (after nvbandwidth): a kernel that spins on a host-mapped flag holds the
// stream while the host enqueues the whole batch; once released, the batch runs back to
// back and the events around it time GPU work only, not the host's enqueue rate. The
// median over several runs is reported, after a warm-up run that is discarded.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/cuda/check.h"
#include "bench/cuda/testcase.h"

namespace chokepoint::bench::gpu {

class BlockingWait {
 public:
  BlockingWait();
  ~BlockingWait();
  BlockingWait(const BlockingWait&) = delete;
  BlockingWait& operator=(const BlockingWait&) = delete;

  // Enqueues the spin kernel on s; work enqueued after it waits until release().
  void block(cudaStream_t s);
  // Lets every blocked stream go.
  void release();
  // Whether a spin kernel gave up (after kTimeoutNs) before release(): the batch was
  // then not fully enqueued when it started and the timing is not trustworthy.
  bool timed_out() const;
  // What the last spin kernel reported, for error messages.
  std::string state() const;

  // Every batch is enqueued in well under a second; a held stream that is not released
  // within this time means the host itself was blocked (see preload_kernel).
  static constexpr uint64_t kTimeoutNs = 3ull * 1000 * 1000 * 1000;

 private:
  volatile int* flag_ = nullptr;     // host view (mapped pinned memory)
  int* flag_dev_ = nullptr;          // device view
  volatile int* timeout_ = nullptr;  // info[4]: exit reason, flag seen, microseconds spun
  int* timeout_dev_ = nullptr;
};

// Holds ctx.stream behind the spin kernel for a scope. If the scope is left by an
// exception before release(), it releases the stream and waits for the GPU, so no
// queued copy outlives the buffers it uses.
class HeldBatch {
 public:
  explicit HeldBatch(Context& ctx);
  ~HeldBatch();
  HeldBatch(const HeldBatch&) = delete;
  HeldBatch& operator=(const HeldBatch&) = delete;
  void release();

 private:
  Context& ctx_;
  bool released_ = false;
};

// Loads a kernel's code now. With lazy module loading (the CUDA 12+ default) the first
// launch of a kernel loads it, and loading waits for the running spin kernel: the host
// blocks until the spin times out. Every kernel launched inside a held batch must be
// preloaded first (the H200 self-test caught exactly this).
template <typename Kernel>
void preload_kernel(Kernel* k) {
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(k));
  if (e != cudaSuccess) throw_cuda(e, "cudaFuncGetAttributes (preload)", __FILE__, __LINE__);
}

// The SM clock over the next `us` microseconds of stream s (a one-thread probe kernel
// reading clock64 against the global timer), enqueued behind whatever s holds, so it
// shows the clock right after that work. Synchronizes s; MHz.
double probe_sm_clock_mhz(cudaStream_t s, int us);

// Most operations enqueued behind one BlockingWait: the driver's launch queue holds
// about a thousand entries; beyond that the host blocks on the held stream (deadlock
// until the spin kernel times out).
inline constexpr int kMaxOpsPerBatch = 256;

// GPU milliseconds of the work `enqueue` puts on ctx.stream, run behind the spin kernel.
double time_batch_ms(Context& ctx, const std::function<void(cudaStream_t)>& enqueue);

// Runs measure() ctx.warmups + ctx.runs times; returns the timed runs' values.
std::vector<double> repeat_runs(const Context& ctx, const std::function<double()>& measure);

double median(std::vector<double> v);

// Fills device memory with pseudo-random bytes (zeros would flatter some hardware paths).
void fill_random_bytes(void* dev, size_t bytes, uint64_t seed, cudaStream_t s);

// Same generator on the host (for checks): byte i of the stream seeded with seed.
void fill_random_bytes_host(void* host, size_t bytes, uint64_t seed);

// 64-bit mix (splitmix64 finalizer) shared by host and device generators.
__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ inline uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace chokepoint::bench::gpu
