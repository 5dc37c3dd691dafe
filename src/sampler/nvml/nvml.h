// NVML, loaded at run time: the one door to the NVIDIA driver for every GPU-facing part
// of chokepoint (doctor, the live sampler, serve). Opens libnvidia-ml.so.1 with dlopen
// (or $CHOKEPOINT_NVML_LIB, which tests point at a fake), binds the newest entry points
// the driver exports, and returns every reading as a Value<T> with a validity bit and
// the NVML return code, so "not supported" is never mistaken for 0.
//
// Thread safety: NVML itself is thread safe; these wrappers keep no mutable state.
// Lifetime: Devices and GpmSamples point into their Nvml, which must outlive them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "sampler/nvml/nvml_api.h"
#include "sampler/nvml/value.h"

namespace chokepoint::nvml {

inline constexpr const char* kLibraryEnvVar = "CHOKEPOINT_NVML_LIB";

enum class Clock { kGraphics, kSm, kMem };
enum class PcieDirection { kTx, kRx };  // TX: GPU -> host, RX: host -> GPU
enum class EccError { kCorrected, kUncorrected };
enum class EccCounter { kVolatile, kAggregate };  // since driver load / lifetime of the board
enum class RetirementCause { kMultipleSingleBit, kDoubleBit };

struct PciInfo {
  std::string bus_id;  // NVML's form, "00000000:3B:00.0"
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned pci_device_id = 0;  // device id << 16 | vendor id (0x10de)
  // The same address as sysfs spells it, "0000:3b:00.0" (/sys/bus/pci/devices/...).
  std::string sysfs_bus_id() const;
};

struct MemoryInfo {
  uint64_t total = 0;
  uint64_t free = 0;
  uint64_t used = 0;                 // with v2: allocations only; with v1: includes reserved
  std::optional<uint64_t> reserved;  // driver/firmware reservation (v2 only)
};

struct ProcessInfo {
  unsigned pid = 0;                    // host PID namespace: may not exist in a container
  std::optional<uint64_t> used_bytes;  // absent when NVML reports NVML_VALUE_NOT_AVAILABLE
};

struct EccMode {
  bool current = false;
  bool pending = false;  // takes effect after the next reboot/reset
};

struct RemappedRows {
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  bool pending = false;           // a GPU reset is needed to apply them
  bool failure_occurred = false;  // a remap failed: the board has run out of spare rows
};

struct Utilization {
  unsigned gpu_pct = 0;     // share of time any kernel or copy ran (not SM activity)
  unsigned memory_pct = 0;  // share of time device memory was read or written
};

struct ComputeCapability {
  int major = 0;
  int minor = 0;
};

// GPM metric ids (nvmlGpmMetricId_t); stable across releases.
namespace gpm {
inline constexpr unsigned kGraphicsUtil = 1;
inline constexpr unsigned kSmUtil = 2;
inline constexpr unsigned kSmOccupancy = 3;
inline constexpr unsigned kIntegerUtil = 4;
inline constexpr unsigned kAnyTensorUtil = 5;
inline constexpr unsigned kDfmaTensorUtil = 6;
inline constexpr unsigned kHmmaTensorUtil = 7;
inline constexpr unsigned kImmaTensorUtil = 9;
inline constexpr unsigned kDramBwUtil = 10;
inline constexpr unsigned kFp64Util = 11;
inline constexpr unsigned kFp32Util = 12;
inline constexpr unsigned kFp16Util = 13;
inline constexpr unsigned kPcieTxPerSec = 20;  // MiB/s
inline constexpr unsigned kPcieRxPerSec = 21;  // MiB/s
inline constexpr unsigned kNvlinkTotalRxPerSec = 60;
inline constexpr unsigned kNvlinkTotalTxPerSec = 61;
}  // namespace gpm

// A GPM counter snapshot (nvmlGpmSample_t), freed on destruction. Two snapshots of the
// same device taken >= 100 ms apart give metrics over that interval.
class GpmSample {
 public:
  GpmSample() = default;
  ~GpmSample();
  GpmSample(GpmSample&& other) noexcept;
  GpmSample& operator=(GpmSample&& other) noexcept;
  GpmSample(const GpmSample&) = delete;
  GpmSample& operator=(const GpmSample&) = delete;

  bool taken() const { return taken_; }

 private:
  friend class Device;
  friend class Nvml;
  void reset();
  const Api* api_ = nullptr;
  abi::GpmSample handle_ = nullptr;
  bool taken_ = false;
};

struct GpmMetricValue {
  unsigned id = 0;
  Value<double> value;  // each metric carries its own NVML status
  std::string name;     // NVML's short name, when it gives one
  std::string unit;
};

class Device {
 public:
  Device() = default;
  unsigned index() const { return index_; }
  abi::Device handle() const { return handle_; }

  Value<std::string> name() const;
  Value<std::string> uuid() const;
  Value<PciInfo> pci_info() const;
  Value<ComputeCapability> cuda_compute_capability() const;
  Value<MemoryInfo> memory_info() const;     // v2 when the driver has it, else v1
  Value<MemoryInfo> memory_info_v1() const;  // the legacy call alone, for cross-checks

  Value<unsigned> pcie_link_generation() const;          // current; drops at idle to save power
  Value<unsigned> max_pcie_link_generation() const;      // best this GPU and this slot allow
  Value<unsigned> gpu_max_pcie_link_generation() const;  // best the GPU alone supports
  Value<unsigned> pcie_link_width() const;
  Value<unsigned> max_pcie_link_width() const;
  // KB/s measured by the driver over a 20 ms window: the call blocks about that long.
  Value<unsigned> pcie_throughput_kbps(PcieDirection direction) const;
  Value<unsigned> pcie_replay_counter() const;

  Value<unsigned> clock_mhz(Clock clock) const;
  Value<unsigned> max_clock_mhz(Clock clock) const;
  Value<uint64_t> clocks_event_reasons() const;  // bitmask, see clock_reasons.h
  Value<int> performance_state() const;          // P0..P15; 32 = unknown
  Value<unsigned> power_usage_mw() const;
  Value<unsigned> enforced_power_limit_mw() const;  // the limit in force now
  Value<unsigned> default_power_limit_mw() const;   // the board's default limit
  Value<int> temperature_c() const;

  Value<bool> persistence_mode() const;
  Value<EccMode> ecc_mode() const;
  Value<uint64_t> total_ecc_errors(EccError type, EccCounter counter) const;
  Value<unsigned> retired_pages(RetirementCause cause) const;  // count (pre-Ampere)
  Value<bool> retired_pages_pending() const;
  Value<RemappedRows> remapped_rows() const;  // Ampere+

  Value<std::vector<ProcessInfo>> compute_processes() const;
  Value<Utilization> utilization() const;

  // CPUs NVML considers close to the GPU (its NUMA node), as CPU ids.
  Value<std::vector<unsigned>> cpu_affinity() const;
  // Only where the GPU memory is itself a NUMA node (Grace Hopper C2C): the node id.
  Value<unsigned> numa_node_id() const;

  Value<bool> gpm_supported() const;
  // Takes a GPM snapshot into `sample` (allocating it on first use). Returns the NVML
  // code (0 on success, kMissingSymbol without GPM entry points).
  int gpm_sample(GpmSample& sample) const;

 private:
  friend class Nvml;
  Device(const Api* api, abi::Device handle, unsigned index) : api_(api), handle_(handle), index_(index) {}
  const Api* api_ = nullptr;
  abi::Device handle_ = nullptr;
  unsigned index_ = 0;
};

struct OpenOptions {
  // Library to dlopen. Empty: $CHOKEPOINT_NVML_LIB if set (used alone: a test that
  // names a missing file must not fall back to the real driver), else
  // libnvidia-ml.so.1, then libnvidia-ml.so (dev symlink, present on some installs only).
  std::string library;
};

class Nvml {
 public:
  // Loads the library, binds its symbols and calls nvmlInit. Fails when no library can be
  // loaded, a required symbol is missing, or nvmlInit fails (no driver, no device node).
  static Result<std::unique_ptr<Nvml>> open(const OpenOptions& options = {});
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library_requested() const { return requested_; }
  const std::string& library_loaded() const { return loaded_; }  // file that dlopen mapped
  const std::vector<SymbolBinding>& symbols() const { return symbols_; }
  // NVML's text for a return code (nvmlErrorString), or our own for kMissingSymbol.
  std::string error_string(int code) const;

  Value<std::string> driver_version() const;  // "580.159.04"
  Value<std::string> nvml_version() const;    // "13.580.159.04"
  Value<int> cuda_driver_version() const;     // 13000 = CUDA 13.0: newest runtime it can run
  Value<unsigned> device_count() const;
  Value<Device> device(unsigned index) const;

  // GPM metrics between two snapshots of one device, one entry per id, in order.
  Value<std::vector<GpmMetricValue>> gpm_metrics(const GpmSample& earlier, const GpmSample& later,
                                                 std::span<const unsigned> ids) const;

 private:
  Nvml() = default;
  void* dl_ = nullptr;
  Api api_;
  std::vector<SymbolBinding> symbols_;
  std::string requested_;
  std::string loaded_;
};

// 13000 -> "13.0", 12080 -> "12.8".
std::string format_cuda_version(int version);

}  // namespace chokepoint::nvml
