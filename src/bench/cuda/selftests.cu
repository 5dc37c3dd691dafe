// Self-tests (`bench --selftest`): the method itself is checked on the GPU before any
// number is trusted: the blocking kernel really holds the stream, event timing agrees
// with a known duration, copies move the right bytes, the bandwidth kernels read and
// write what they claim. (FFMA and GEMM self-tests live beside their benchmarks.)
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/cuda/check.h"
#include "bench/cuda/memory_kernels.h"
#include "bench/cuda/resources.h"
#include "bench/cuda/testcase.h"
#include "bench/cuda/timing.h"

namespace chokepoint::bench::gpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

__global__ void set_flag_kernel(int* p, int v) { *p = v; }

__global__ void sleep_kernel(uint64_t ns) {
  const uint64_t t0 = global_timer_ns();
  while (global_timer_ns() - t0 < ns) {
  }
}

std::string first_mismatch(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const char* what) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) return std::string(what) + ": first wrong byte at offset " + std::to_string(i);
  }
  return {};
}

class TimingSelftest : public Testcase {
 public:
  std::string key() const override { return "selftest_timing"; }
  std::string description() const override {
    return "the blocking kernel holds the stream until released; event timing of a 50 ms kernel";
  }
  std::string unit() const override { return "ms"; }
  bool selftest() const override { return true; }

  Outcome run(Context& ctx) override {
    // Without these two lines the first check fails: lazy loading of a kernel first
    // launched behind the held stream blocks the host until the spin times out.
    preload_kernel(set_flag_kernel);
    preload_kernel(sleep_kernel);
    DeviceBuffer flag(sizeof(int));
    CP_CUDA(cudaMemset(flag.get(), 0, sizeof(int)));
    Event done;
    {
      HeldBatch held(ctx);
      set_flag_kernel<<<1, 1, 0, ctx.stream>>>(flag.as<int>(), 1);
      CP_CUDA_LAUNCH();
      CP_CUDA(cudaEventRecord(done.get(), ctx.stream));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const cudaError_t q = cudaEventQuery(done.get());
      if (q != cudaErrorNotReady) {
        throw BenchError(std::string("work behind the blocking kernel ran before release (event query ") +
                         cudaGetErrorName(q) + "; " + ctx.wait->state() + "): timings would include enqueue gaps");
      }
      held.release();
    }
    CP_CUDA(cudaEventSynchronize(done.get()));
    int v = 0;
    CP_CUDA(cudaMemcpy(&v, flag.get(), sizeof(int), cudaMemcpyDeviceToHost));
    if (v != 1 || ctx.wait->timed_out()) {
      throw BenchError("work behind the blocking kernel did not run after release (" + ctx.wait->state() + ")");
    }

    constexpr double kMs = 50;
    const double ms = time_batch_ms(ctx, [&](cudaStream_t s) {
      sleep_kernel<<<1, 1, 0, s>>>(static_cast<uint64_t>(kMs * 1e6));
      CP_CUDA_LAUNCH();
    });
    if (ms < kMs * 0.98 || ms > kMs * 1.10) {
      throw BenchError("a " + std::to_string(kMs) + " ms kernel timed as " + std::to_string(ms) + " ms");
    }
    Outcome o;
    o.samples = {ms};
    o.note = "blocking kernel held the stream for 50 ms and released it; a 50 ms kernel timed as " +
             std::to_string(ms) + " ms";
    return o;
  }
};

// Random bytes through every copy path, compared with the same generator on the host.
class CopySelftest : public Testcase {
 public:
  std::string key() const override { return "selftest_copies"; }
  std::string description() const override {
    return "64 MiB of random bytes survive D2H pinned, H2D pinned, D2D, H2D and D2H pageable";
  }
  std::string unit() const override { return "wrong bytes"; }
  bool selftest() const override { return true; }

  Outcome run(Context& ctx) override {
    const size_t n = 64 * kMiB;
    DeviceBuffer a(n), b(n), c(n);
    PinnedBuffer pinned(n);
    std::vector<uint8_t> want(n), got(n);
    fill_random_bytes_host(want.data(), n, 77);
    fill_random_bytes(a.get(), n, 77, ctx.stream);
    CP_CUDA(cudaMemcpyAsync(pinned.get(), a.get(), n, cudaMemcpyDeviceToHost, ctx.stream));
    CP_CUDA(cudaStreamSynchronize(ctx.stream));
    std::memcpy(got.data(), pinned.get(), n);
    std::string err = first_mismatch(got, want, "device fill / D2H pinned");
    if (err.empty()) {
      CP_CUDA(cudaMemcpyAsync(b.get(), pinned.get(), n, cudaMemcpyHostToDevice, ctx.stream));
      CP_CUDA(cudaMemcpyAsync(c.get(), b.get(), n, cudaMemcpyDeviceToDevice, ctx.stream));
      CP_CUDA(cudaStreamSynchronize(ctx.stream));
      std::fill(got.begin(), got.end(), 0);
      CP_CUDA(cudaMemcpy(got.data(), c.get(), n, cudaMemcpyDeviceToHost));  // pageable D2H
      err = first_mismatch(got, want, "H2D pinned / D2D / D2H pageable");
    }
    if (err.empty()) {
      CP_CUDA(cudaMemset(b.get(), 0, n));
      CP_CUDA(cudaMemcpy(b.get(), want.data(), n, cudaMemcpyHostToDevice));  // pageable H2D
      CP_CUDA(cudaMemcpy(got.data(), b.get(), n, cudaMemcpyDeviceToHost));
      err = first_mismatch(got, want, "H2D pageable");
    }
    if (!err.empty()) throw BenchError(err);
    Outcome o;
    o.samples = {0};
    o.note = "every byte matched on every path";
    return o;
  }
};

class MemoryKernelSelftest : public Testcase {
 public:
  std::string key() const override { return "selftest_memory_kernels"; }
  std::string description() const override {
    return "DRAM read/write/copy and L2 read kernels touch exactly the bytes they count";
  }
  std::string unit() const override { return "errors"; }
  bool selftest() const override { return true; }

  Outcome run(Context& ctx) override {
    const LaunchShape l2 = l2_shape(ctx);
    const size_t n = l2_elements(l2, 1);  // one full sweep of the L2 kernel
    const size_t bytes = n * sizeof(int4);
    std::vector<uint8_t> want(bytes), got(bytes);
    fill_random_bytes_host(want.data(), bytes, 91);
    unsigned want_xor = 0;
    for (size_t i = 0; i < bytes / 4; ++i) {
      unsigned w;
      std::memcpy(&w, want.data() + 4 * i, 4);
      want_xor ^= w;
    }
    DeviceBuffer a(bytes), b(bytes), sink(sizeof(unsigned));
    fill_random_bytes(a.get(), bytes, 91, ctx.stream);
    auto read_sink = [&] {
      unsigned v = 0;
      CP_CUDA(cudaStreamSynchronize(ctx.stream));
      CP_CUDA(cudaMemcpy(&v, sink.get(), sizeof(v), cudaMemcpyDeviceToHost));
      CP_CUDA(cudaMemset(sink.get(), 0, sizeof(unsigned)));
      return v;
    };
    CP_CUDA(cudaMemset(sink.get(), 0, sizeof(unsigned)));
    std::vector<std::string> errors;
    launch_read(read_shape(ctx), a.as<int4>(), n, sink.as<unsigned>(), ctx.stream);
    if (read_sink() != want_xor) errors.push_back("read kernel XOR differs from the CPU's");
    launch_l2_read(l2, a.as<int4>(), n, 1, sink.as<unsigned>(), ctx.stream);
    if (read_sink() != want_xor) errors.push_back("L2 read kernel XOR differs from the CPU's");
    launch_copy(copy_shape(ctx), a.as<int4>(), b.as<int4>(), n, ctx.stream);
    CP_CUDA(cudaStreamSynchronize(ctx.stream));
    CP_CUDA(cudaMemcpy(got.data(), b.get(), bytes, cudaMemcpyDeviceToHost));
    if (auto e = first_mismatch(got, want, "copy kernel"); !e.empty()) errors.push_back(e);
    launch_write(write_shape(ctx), b.as<int4>(), n, 7, ctx.stream);
    CP_CUDA(cudaStreamSynchronize(ctx.stream));
    std::vector<int4> w(n);
    CP_CUDA(cudaMemcpy(w.data(), b.get(), bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) {
      if (w[i].x != 7 || w[i].y != (7 ^ 1) || w[i].z != (7 ^ 2) || w[i].w != (7 ^ 3)) {
        errors.push_back("write kernel: element " + std::to_string(i) + " not written");
        break;
      }
    }
    if (!errors.empty()) {
      std::string all;
      for (const auto& e : errors) all += (all.empty() ? "" : "; ") + e;
      throw BenchError(all);
    }
    Outcome o;
    o.samples = {0};
    o.note = std::to_string(bytes / kMiB) + " MiB checked through read, L2 read, copy and write kernels";
    return o;
  }
};

}  // namespace

std::unique_ptr<Testcase> make_selftest_timing() { return std::make_unique<TimingSelftest>(); }
std::unique_ptr<Testcase> make_selftest_copies() { return std::make_unique<CopySelftest>(); }
std::unique_ptr<Testcase> make_selftest_memory_kernels() { return std::make_unique<MemoryKernelSelftest>(); }

}  // namespace chokepoint::bench::gpu
