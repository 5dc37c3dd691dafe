// A benchmark testcase (docs/ARCHITECTURE.md convention 9, after nvbandwidth): a key, a
// description, a filter that waives it when it cannot run on this GPU, and run(), which
// returns one value per timed run; the report keeps their median.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace chokepoint::bench::gpu {

class BlockingWait;

enum class Mode { kFull, kQuick, kSelftest };

struct DeviceFacts {
  int index = -1;
  std::string name, uuid, pci_bus_id;
  int cc_major = -1, cc_minor = -1;
  int sms = -1;
  size_t total_memory = 0, free_memory = 0;
  size_t l2_bytes = 0;
  int sm_clock_max_mhz = -1, mem_clock_max_mhz = -1, mem_bus_width_bits = -1;
  int ecc = -1, async_engines = -1;
  int max_threads_per_sm = -1;

  int cc() const { return cc_major * 10 + cc_minor; }
};

struct Context {
  DeviceFacts dev;
  Mode mode = Mode::kFull;
  cudaStream_t stream = nullptr;  // the stream testcases time their work on
  BlockingWait* wait = nullptr;
  int runs = 7;  // timed runs per testcase; the median is reported
  int warmups = 1;

  // Facts found while running, reported with the GPU.
  double sm_clock_under_load_mhz = -1;
  std::string pcie_speed_under_load, pcie_width_under_load;

  bool quick() const { return mode == Mode::kQuick; }
  // Bytes still free on the device now.
  size_t free_bytes() const;
};

struct Outcome {
  std::vector<double> samples;  // one per timed run, in the testcase's unit
  std::string note;             // how it was measured (sizes, algorithm, validation)
  double clock_mhz = -1;        // SM clock seen right after the measurement, -1 unknown
};

class Testcase {
 public:
  virtual ~Testcase() = default;
  virtual std::string key() const = 0;
  virtual std::string description() const = 0;
  virtual std::string unit() const = 0;
  // "" when the testcase can run on this GPU, else why it is waived.
  virtual std::string waive_reason(const Context& ctx) const { return {}; }
  // Throws BenchError (failed) or Waived.
  virtual Outcome run(Context& ctx) = 0;
  virtual bool selftest() const { return false; }
};

using TestcaseList = std::vector<std::unique_ptr<Testcase>>;

// The registry (registry.cu): one explicit list per mode.
TestcaseList make_benchmarks();
TestcaseList make_selftests();

// Factories, one group per file.
std::unique_ptr<Testcase> make_pageable_copy(bool to_device);
std::unique_ptr<Testcase> make_pinned_copy(bool to_device);
std::unique_ptr<Testcase> make_bidir_copy();
std::unique_ptr<Testcase> make_d2d_memcpy();
std::unique_ptr<Testcase> make_dram_test(int kind);  // 0 read, 1 write, 2 copy
std::unique_ptr<Testcase> make_l2_read();
std::unique_ptr<Testcase> make_launch_latency();
std::unique_ptr<Testcase> make_graph_node_latency();
std::unique_ptr<Testcase> make_launch_sync_roundtrip();
std::unique_ptr<Testcase> make_ffma();
std::unique_ptr<Testcase> make_gemm(int precision);  // gemm.h: GemmPrecision
std::unique_ptr<Testcase> make_selftest_timing();
std::unique_ptr<Testcase> make_selftest_copies();
std::unique_ptr<Testcase> make_selftest_memory_kernels();
std::unique_ptr<Testcase> make_selftest_ffma();
std::unique_ptr<Testcase> make_selftest_gemm(int precision);

// Sizes: the full value, or the quick one in --quick mode.
inline size_t pick(const Context& ctx, size_t full, size_t quick) { return ctx.quick() ? quick : full; }

// "needs X MiB of device memory, Y MiB free" when bytes (plus headroom) do not fit.
std::string memory_waiver(const Context& ctx, size_t bytes);

}  // namespace chokepoint::bench::gpu
