// Host<->device and device-to-device copies through the copy engines (cudaMemcpy*):
// pageable and pinned, each direction, both directions at once, and D2D.
#include <chrono>
#include <fstream>
#include <string>

#include "bench/cuda/check.h"
#include "bench/cuda/resources.h"
#include "bench/cuda/testcase.h"
#include "bench/cuda/timing.h"
#include "machine/bench_keys.h"

namespace chokepoint::bench::gpu {

namespace bench_keys = machine::bench_keys;
namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::string mib(size_t bytes) { return std::to_string(bytes / kMiB) + " MiB"; }

double gbps(double bytes, double ms) { return bytes / ms / 1e6; }

std::string read_sysfs(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// PCIe links drop to a low speed when idle, so the link is read while copies run.
void probe_link_under_load(Context& ctx, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (ctx.dev.pci_bus_id.empty()) return;
  for (int i = 0; i < 4; ++i) CP_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream));
  const std::string dir = "/sys/bus/pci/devices/" + ctx.dev.pci_bus_id + "/";
  ctx.pcie_speed_under_load = read_sysfs(dir + "current_link_speed");
  ctx.pcie_width_under_load = read_sysfs(dir + "current_link_width");
  CP_CUDA(cudaStreamSynchronize(ctx.stream));
}

// Pageable copies are synchronous and staged by the CPU through a driver buffer; the
// host clock around cudaMemcpy is what an application waits.
class PageableCopy : public Testcase {
 public:
  explicit PageableCopy(bool h2d) : h2d_(h2d) {}
  std::string key() const override { return h2d_ ? bench_keys::kH2dPageable : bench_keys::kD2hPageable; }
  std::string description() const override {
    return h2d_ ? "host to device, pageable memory, cudaMemcpy" : "device to host, pageable memory, cudaMemcpy";
  }
  std::string unit() const override { return "GB/s"; }
  std::string waive_reason(const Context& ctx) const override { return memory_waiver(ctx, bytes(ctx)); }

  Outcome run(Context& ctx) override {
    const size_t n = bytes(ctx);
    PageableBuffer host(n);
    DeviceBuffer dev(n);
    fill_random_bytes(dev.get(), n, 11, ctx.stream);
    CP_CUDA(cudaStreamSynchronize(ctx.stream));
    if (h2d_) CP_CUDA(cudaMemcpy(host.get(), dev.get(), n, cudaMemcpyDeviceToHost));  // random source
    auto measure = [&] {
      CP_CUDA(cudaDeviceSynchronize());
      const auto t0 = std::chrono::steady_clock::now();
      if (h2d_) {
        CP_CUDA(cudaMemcpy(dev.get(), host.get(), n, cudaMemcpyHostToDevice));
      } else {
        CP_CUDA(cudaMemcpy(host.get(), dev.get(), n, cudaMemcpyDeviceToHost));
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return gbps(static_cast<double>(n), ms);
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = mib(n) + " per run, host clock around a synchronous cudaMemcpy, " + std::to_string(ctx.runs) + " runs";
    return o;
  }

 private:
  static size_t bytes(const Context& ctx) { return pick(ctx, 512 * kMiB, 128 * kMiB); }
  bool h2d_;
};

class PinnedCopy : public Testcase {
 public:
  explicit PinnedCopy(bool h2d) : h2d_(h2d) {}
  std::string key() const override { return h2d_ ? bench_keys::kH2dPinned : bench_keys::kD2hPinned; }
  std::string description() const override {
    return h2d_ ? "host to device, pinned memory, cudaMemcpyAsync" : "device to host, pinned memory, cudaMemcpyAsync";
  }
  std::string unit() const override { return "GB/s"; }
  std::string waive_reason(const Context& ctx) const override { return memory_waiver(ctx, bytes(ctx)); }

  Outcome run(Context& ctx) override {
    const size_t n = bytes(ctx);
    const int copies = 4;
    PinnedBuffer host(n);
    DeviceBuffer dev(n);
    fill_random_bytes(dev.get(), n, 12, ctx.stream);
    CP_CUDA(cudaMemcpyAsync(host.get(), dev.get(), n, cudaMemcpyDeviceToHost, ctx.stream));
    CP_CUDA(cudaStreamSynchronize(ctx.stream));
    void* dst = h2d_ ? dev.get() : host.get();
    void* src = h2d_ ? host.get() : dev.get();
    const auto kind = h2d_ ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    auto measure = [&] {
      const double ms = time_batch_ms(ctx, [&](cudaStream_t s) {
        for (int c = 0; c < copies; ++c) CP_CUDA(cudaMemcpyAsync(dst, src, n, kind, s));
      });
      return gbps(static_cast<double>(n) * copies, ms);
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    probe_link_under_load(ctx, dst, src, n, kind);
    o.note = std::to_string(copies) + " x " + mib(n) + " per run behind a blocking kernel, cudaEvent timing, " +
             std::to_string(ctx.runs) + " runs";
    return o;
  }

 private:
  static size_t bytes(const Context& ctx) { return pick(ctx, 1024 * kMiB, 256 * kMiB); }
  bool h2d_;
};

// H2D on one stream and D2H on another, both released by the same blocking kernel;
// the sum of both directions over the time until the later one ends.
class BidirCopy : public Testcase {
 public:
  std::string key() const override { return bench_keys::kBidirPinned; }
  std::string description() const override {
    return "host to device and device to host at once, pinned memory (sum of both)";
  }
  std::string unit() const override { return "GB/s"; }
  std::string waive_reason(const Context& ctx) const override {
    if (ctx.dev.async_engines >= 0 && ctx.dev.async_engines < 2) {
      return "one copy engine: copies in both directions cannot overlap on this GPU";
    }
    return memory_waiver(ctx, 2 * bytes(ctx));
  }

  Outcome run(Context& ctx) override {
    const size_t n = bytes(ctx);
    const int copies = 4;
    PinnedBuffer h_src(n), h_dst(n);
    DeviceBuffer d_src(n), d_dst(n);
    Stream other;
    fill_random_bytes(d_src.get(), n, 13, ctx.stream);
    CP_CUDA(cudaMemcpyAsync(h_src.get(), d_src.get(), n, cudaMemcpyDeviceToHost, ctx.stream));
    CP_CUDA(cudaStreamSynchronize(ctx.stream));
    double last_h2d = 0, last_d2h = 0;
    auto measure = [&] {
      Event start, end_h2d, end_d2h;
      {
        HeldBatch held(ctx);
        CP_CUDA(cudaEventRecord(start.get(), ctx.stream));
        CP_CUDA(cudaStreamWaitEvent(other.get(), start.get(), 0));
        for (int c = 0; c < copies; ++c) {
          CP_CUDA(cudaMemcpyAsync(d_dst.get(), h_src.get(), n, cudaMemcpyHostToDevice, ctx.stream));
          CP_CUDA(cudaMemcpyAsync(h_dst.get(), d_src.get(), n, cudaMemcpyDeviceToHost, other.get()));
        }
        CP_CUDA(cudaEventRecord(end_h2d.get(), ctx.stream));
        CP_CUDA(cudaEventRecord(end_d2h.get(), other.get()));
        held.release();
      }
      CP_CUDA(cudaEventSynchronize(end_h2d.get()));
      CP_CUDA(cudaEventSynchronize(end_d2h.get()));
      if (ctx.wait->timed_out()) throw BenchError("the blocking kernel timed out; timing discarded");
      float t_h2d = 0, t_d2h = 0;
      CP_CUDA(cudaEventElapsedTime(&t_h2d, start.get(), end_h2d.get()));
      CP_CUDA(cudaEventElapsedTime(&t_d2h, start.get(), end_d2h.get()));
      const double bytes_one_way = static_cast<double>(n) * copies;
      last_h2d = gbps(bytes_one_way, t_h2d);
      last_d2h = gbps(bytes_one_way, t_d2h);
      return gbps(2 * bytes_one_way, std::max(t_h2d, t_d2h));
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    char buf[160];
    std::snprintf(buf, sizeof(buf), "; in the last run H2D %.1f GB/s and D2H %.1f GB/s while both ran", last_h2d,
                  last_d2h);
    o.note = std::to_string(copies) + " x " + mib(n) + " each way per run on two streams, " + std::to_string(ctx.runs) +
             " runs" + buf;
    return o;
  }

 private:
  static size_t bytes(const Context& ctx) { return pick(ctx, 1024 * kMiB, 256 * kMiB); }
};

// Device-to-device cudaMemcpyAsync; bytes counted once (DRAM traffic is twice that).
class D2DMemcpy : public Testcase {
 public:
  std::string key() const override { return bench_keys::kD2dMemcpy; }
  std::string description() const override {
    return "device to device cudaMemcpyAsync, bytes counted once (DRAM moves twice as many)";
  }
  std::string unit() const override { return "GB/s"; }
  std::string waive_reason(const Context& ctx) const override { return memory_waiver(ctx, 2 * bytes(ctx)); }

  Outcome run(Context& ctx) override {
    const size_t n = bytes(ctx);
    const int copies = 10;
    DeviceBuffer a(n), b(n);
    fill_random_bytes(a.get(), n, 14, ctx.stream);
    auto measure = [&] {
      const double ms = time_batch_ms(ctx, [&](cudaStream_t s) {
        for (int c = 0; c < copies; ++c) {
          CP_CUDA(cudaMemcpyAsync(c % 2 == 0 ? b.get() : a.get(), c % 2 == 0 ? a.get() : b.get(), n,
                                  cudaMemcpyDeviceToDevice, s));
        }
      });
      return gbps(static_cast<double>(n) * copies, ms);
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = std::to_string(copies) + " x " + mib(n) + " per run (ping-pong between two buffers), " +
             std::to_string(ctx.runs) + " runs";
    return o;
  }

 private:
  static size_t bytes(const Context& ctx) { return pick(ctx, 1024 * kMiB, 512 * kMiB); }
};

}  // namespace

std::unique_ptr<Testcase> make_pageable_copy(bool to_device) { return std::make_unique<PageableCopy>(to_device); }
std::unique_ptr<Testcase> make_pinned_copy(bool to_device) { return std::make_unique<PinnedCopy>(to_device); }
std::unique_ptr<Testcase> make_bidir_copy() { return std::make_unique<BidirCopy>(); }
std::unique_ptr<Testcase> make_d2d_memcpy() { return std::make_unique<D2DMemcpy>(); }

}  // namespace chokepoint::bench::gpu
