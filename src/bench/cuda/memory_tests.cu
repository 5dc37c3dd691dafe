// Device memory (DRAM/HBM) read, write and copy bandwidth with our own kernels, and L2
// read bandwidth on a buffer that fits in L2.
#include <string>

#include "bench/cuda/check.h"
#include "bench/cuda/memory_kernels.h"
#include "bench/cuda/resources.h"
#include "bench/cuda/testcase.h"
#include "bench/cuda/timing.h"
#include "machine/bench_keys.h"

namespace chokepoint::bench::gpu {

namespace bench_keys = machine::bench_keys;
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr int kKernelsPerRun = 20;

const char* kKeys[] = {bench_keys::kDramRead, bench_keys::kDramWrite, bench_keys::kDramCopy};
const char* kDescriptions[] = {
    "device memory read bandwidth (kernel, 16-byte loads)",
    "device memory write bandwidth (kernel, 16-byte stores)",
    "device memory copy bandwidth (kernel), bytes counted once (DRAM moves twice as many)",
};

class DramTest : public Testcase {
 public:
  explicit DramTest(int kind) : kind_(kind) {}
  std::string key() const override { return kKeys[kind_]; }
  std::string description() const override { return kDescriptions[kind_]; }
  std::string unit() const override { return "GB/s"; }
  std::string waive_reason(const Context& ctx) const override {
    return memory_waiver(ctx, (kind_ == 2 ? 2 : 1) * bytes(ctx));
  }

  Outcome run(Context& ctx) override {
    // Far larger than L2 (60 MB on H200) so that every access goes to DRAM.
    const size_t n_bytes = bytes(ctx);
    const size_t n = n_bytes / sizeof(int4);
    DeviceBuffer a(n_bytes), sink(sizeof(unsigned));
    DeviceBuffer b = kind_ == 2 ? DeviceBuffer(n_bytes) : DeviceBuffer();
    fill_random_bytes(a.get(), n_bytes, 21, ctx.stream);
    const LaunchShape sh = kind_ == 0 ? read_shape(ctx) : kind_ == 1 ? write_shape(ctx) : copy_shape(ctx);
    auto measure = [&] {
      const double ms = time_batch_ms(ctx, [&](cudaStream_t s) {
        for (int k = 0; k < kKernelsPerRun; ++k) {
          if (kind_ == 0) launch_read(sh, a.as<int4>(), n, sink.as<unsigned>(), s);
          else if (kind_ == 1) launch_write(sh, a.as<int4>(), n, k, s);
          else
            launch_copy(sh, k % 2 == 0 ? a.as<int4>() : b.as<int4>(), k % 2 == 0 ? b.as<int4>() : a.as<int4>(), n, s);
        }
      });
      return static_cast<double>(n_bytes) * kKernelsPerRun / ms / 1e6;
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = std::to_string(kKernelsPerRun) + " kernels x " + std::to_string(n_bytes / kMiB) + " MiB per run, " +
             std::to_string(sh.blocks) + " blocks x " + std::to_string(sh.threads) + " threads, " +
             std::to_string(ctx.runs) + " runs";
    return o;
  }

 private:
  static size_t bytes(const Context& ctx) { return pick(ctx, 1024 * kMiB, 512 * kMiB); }
  int kind_;
};

class L2Read : public Testcase {
 public:
  std::string key() const override { return bench_keys::kL2Read; }
  std::string description() const override { return "L2 cache read bandwidth (buffer of a quarter of L2, ld.cg)"; }
  std::string unit() const override { return "GB/s"; }
  std::string waive_reason(const Context& ctx) const override {
    return ctx.dev.l2_bytes < (size_t{1} << 20) ? "L2 size unknown" : "";
  }

  Outcome run(Context& ctx) override {
    // A quarter of L2: Hopper/Ampere split L2 in two partitions; a small buffer stays
    // resident whichever partition serves it.
    const LaunchShape sh = l2_shape(ctx);
    const size_t n = l2_elements(sh, ctx.dev.l2_bytes / 4);
    const size_t n_bytes = n * sizeof(int4);
    const int reps = ctx.quick() ? 64 : 256;
    DeviceBuffer a(n_bytes), sink(sizeof(unsigned));
    fill_random_bytes(a.get(), n_bytes, 22, ctx.stream);
    auto measure = [&] {
      const double ms = time_batch_ms(ctx, [&](cudaStream_t s) {
        for (int k = 0; k < 4; ++k) launch_l2_read(sh, a.as<int4>(), n, reps, sink.as<unsigned>(), s);
      });
      return static_cast<double>(n_bytes) * reps * 4 / ms / 1e6;
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = std::to_string(n_bytes / kMiB) + " MiB buffer read " + std::to_string(reps) + " times per kernel, " +
             "4 kernels per run, " + std::to_string(ctx.runs) + " runs";
    return o;
  }
};

}  // namespace

std::unique_ptr<Testcase> make_dram_test(int kind) { return std::make_unique<DramTest>(kind); }
std::unique_ptr<Testcase> make_l2_read() { return std::make_unique<L2Read>(); }

}  // namespace chokepoint::bench::gpu
