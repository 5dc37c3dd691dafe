#include "sampler/nvml/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sampler/nvml/ranges.h"

namespace chokepoint::nvml {
namespace {

Value<std::string> get_string(abi::Return (*fn)(char*, unsigned), unsigned size) {
  if (fn == nullptr) return Value<std::string>::fail(kMissingSymbol);
  std::vector<char> buf(size, '\0');
  const abi::Return rc = fn(buf.data(), size);
  if (rc != abi::kSuccess) return Value<std::string>::fail(rc);
  buf.back() = '\0';  // never trust a library to terminate
  return Value<std::string>::ok(std::string(buf.data()));
}

Value<std::string> get_device_string(abi::DeviceGetStringFn fn, abi::Device h, unsigned size) {
  if (fn == nullptr) return Value<std::string>::fail(kMissingSymbol);
  std::vector<char> buf(size, '\0');
  const abi::Return rc = fn(h, buf.data(), size);
  if (rc != abi::kSuccess) return Value<std::string>::fail(rc);
  buf.back() = '\0';
  return Value<std::string>::ok(std::string(buf.data()));
}

Value<unsigned> get_uint(abi::DeviceGetUintFn fn, abi::Device h) {
  if (fn == nullptr) return Value<unsigned>::fail(kMissingSymbol);
  unsigned v = 0;
  const abi::Return rc = fn(h, &v);
  return rc == abi::kSuccess ? Value<unsigned>::ok(v) : Value<unsigned>::fail(rc);
}

Value<unsigned> get_uint_by_type(abi::DeviceGetUintByTypeFn fn, abi::Device h, int type) {
  if (fn == nullptr) return Value<unsigned>::fail(kMissingSymbol);
  unsigned v = 0;
  const abi::Return rc = fn(h, type, &v);
  return rc == abi::kSuccess ? Value<unsigned>::ok(v) : Value<unsigned>::fail(rc);
}

// Memory figures no GPU can report: none at all, or more used (or free) than there is.
Value<MemoryInfo> checked(Value<MemoryInfo> v) {
  if (v.valid && (v.value.total == 0 || v.value.used > v.value.total || v.value.free > v.value.total ||
                  (v.value.reserved && *v.value.reserved > v.value.total))) {
    return Value<MemoryInfo>::fail(kOutOfRange);
  }
  return v;
}

Value<int> checked_temperature(int c) {
  if (c == range::kTemperatureSentinel) return Value<int>::fail(kOutOfRange);
  return within(Value<int>::ok(c), range::kTemperatureCMin, range::kTemperatureCMax);
}

Value<bool> get_enable_state(abi::DeviceGetIntFn fn, abi::Device h) {
  if (fn == nullptr) return Value<bool>::fail(kMissingSymbol);
  int v = 0;
  const abi::Return rc = fn(h, &v);
  return rc == abi::kSuccess ? Value<bool>::ok(v == abi::kFeatureEnabled) : Value<bool>::fail(rc);
}

int clock_type(Clock c) {
  switch (c) {
    case Clock::kGraphics: return abi::kClockGraphics;
    case Clock::kSm: return abi::kClockSm;
    case Clock::kMem: return abi::kClockMem;
  }
  return abi::kClockSm;
}

// NVML_VALUE_NOT_AVAILABLE (-1) stored in an unsigned long long.
constexpr unsigned long long kValueNotAvailable = ~0ull;

}  // namespace

std::string PciInfo::sysfs_bus_id() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", domain & 0xffffu, bus & 0xffu, device & 0xffu);
  return buf;
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "?";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// ---- Nvml -------------------------------------------------------------------------------

Result<std::unique_ptr<Nvml>> Nvml::open(const OpenOptions& options) {
  std::vector<std::string> candidates;
  if (!options.library.empty()) {
    candidates.push_back(options.library);
  } else if (const char* env = std::getenv(kLibraryEnvVar); env != nullptr && env[0] != '\0') {
    candidates.emplace_back(env);
  } else {
    candidates = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  }
  void* dl = nullptr;
  std::string first_error;
  std::string requested;
  for (const auto& c : candidates) {
    dl = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (dl != nullptr) {
      requested = c;
      break;
    }
    const char* e = dlerror();
    if (first_error.empty() && e != nullptr) first_error = e;
  }
  if (dl == nullptr) {
    std::string tried;
    for (const auto& c : candidates) tried += (tried.empty() ? "" : ", ") + c;
    return Status::Error("NVIDIA driver library not found (tried " + tried +
                         "); no NVIDIA driver on this machine, or it is not visible here (" + first_error + ")");
  }

  std::unique_ptr<Nvml> n(new Nvml());
  n->requested_ = requested;
  n->symbols_ = resolve_api(dl, &n->api_);
  for (const auto& s : n->symbols_) {
    if (s.required && s.resolved.empty()) {
      dlclose(dl);
      return Status::Error(requested + " is not a usable NVML library: it lacks " + s.candidates.front());
    }
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(n->api_.init), &info) != 0 && info.dli_fname != nullptr) {
    n->loaded_ = info.dli_fname;
  } else {
    n->loaded_ = requested;
  }
  const abi::Return rc = n->api_.init();
  if (rc != abi::kSuccess) {
    std::string msg = "NVML could not start (nvmlInit: " + n->error_string(rc) + ", code " + std::to_string(rc) + ")";
    if (rc == abi::kErrorDriverNotLoaded) msg += ": the NVIDIA kernel driver is not loaded";
    if (rc == abi::kErrorNoPermission) msg += ": no permission to open /dev/nvidia*";
    dlclose(dl);
    return Status::Error(msg);
  }
  n->dl_ = dl;
  return n;
}

Nvml::~Nvml() {
  if (dl_ == nullptr) return;
  if (api_.shutdown != nullptr) api_.shutdown();
  dlclose(dl_);
}

std::string Nvml::error_string(int code) const {
  if (code == kMissingSymbol) return "not provided by this NVML library (older driver)";
  if (code == kNotQueried) return "not queried";
  if (code == kOutOfRange) return "an impossible value (out of range): not recorded";
  if (api_.error_string != nullptr) {
    const char* s = api_.error_string(code);
    if (s != nullptr && s[0] != '\0') return s;
  }
  return "NVML error " + std::to_string(code);
}

Value<std::string> Nvml::driver_version() const {
  return get_string(api_.system_get_driver_version, abi::kDriverVersionBufferSize);
}

Value<std::string> Nvml::nvml_version() const {
  return get_string(api_.system_get_nvml_version, abi::kNvmlVersionBufferSize);
}

Value<int> Nvml::cuda_driver_version() const {
  if (api_.system_get_cuda_driver_version == nullptr) return Value<int>::fail(kMissingSymbol);
  int v = 0;
  const abi::Return rc = api_.system_get_cuda_driver_version(&v);
  return rc == abi::kSuccess ? Value<int>::ok(v) : Value<int>::fail(rc);
}

Value<unsigned> Nvml::device_count() const {
  unsigned n = 0;
  const abi::Return rc = api_.device_get_count(&n);
  return rc == abi::kSuccess ? Value<unsigned>::ok(n) : Value<unsigned>::fail(rc);
}

Value<Device> Nvml::device(unsigned index) const {
  abi::Device h = nullptr;
  const abi::Return rc = api_.device_get_handle_by_index(index, &h);
  if (rc != abi::kSuccess) return Value<Device>::fail(rc);
  return Value<Device>::ok(Device(&api_, h, index));
}

// ---- Device: identity and memory ----------------------------------------------------------

Value<std::string> Device::name() const {
  return get_device_string(api_->device_get_name, handle_, abi::kDeviceNameBufferSize);
}

Value<std::string> Device::uuid() const {
  return get_device_string(api_->device_get_uuid, handle_, abi::kDeviceUuidBufferSize);
}

Value<PciInfo> Device::pci_info() const {
  if (api_->device_get_pci_info == nullptr) return Value<PciInfo>::fail(kMissingSymbol);
  abi::PciInfo raw{};
  const abi::Return rc = api_->device_get_pci_info(handle_, &raw);
  if (rc != abi::kSuccess) return Value<PciInfo>::fail(rc);
  raw.bus_id[sizeof(raw.bus_id) - 1] = '\0';
  PciInfo p;
  p.bus_id = raw.bus_id;
  p.domain = raw.domain;
  p.bus = raw.bus;
  p.device = raw.device;
  p.pci_device_id = raw.pci_device_id;
  return Value<PciInfo>::ok(std::move(p));
}

Value<ComputeCapability> Device::cuda_compute_capability() const {
  if (api_->device_get_cuda_compute_capability == nullptr) return Value<ComputeCapability>::fail(kMissingSymbol);
  ComputeCapability cc;
  const abi::Return rc = api_->device_get_cuda_compute_capability(handle_, &cc.major, &cc.minor);
  return rc == abi::kSuccess ? Value<ComputeCapability>::ok(cc) : Value<ComputeCapability>::fail(rc);
}

Value<MemoryInfo> Device::memory_info() const {
  // v2 separates the driver's reservation from allocations; v1 lumps them into "used".
  abi::Return first_error = kMissingSymbol;
  if (api_->device_get_memory_info_v2 != nullptr) {
    abi::MemoryV2 m{};
    m.version = abi::kMemoryV2Version;
    const abi::Return rc = api_->device_get_memory_info_v2(handle_, &m);
    if (rc == abi::kSuccess) {
      return checked(Value<MemoryInfo>::ok(MemoryInfo{m.total, m.free, m.used, m.reserved}));
    }
    first_error = rc;
  }
  if (api_->device_get_memory_info_v1 != nullptr) {
    abi::MemoryV1 m{};
    const abi::Return rc = api_->device_get_memory_info_v1(handle_, &m);
    if (rc == abi::kSuccess) return checked(Value<MemoryInfo>::ok(MemoryInfo{m.total, m.free, m.used, std::nullopt}));
    if (first_error == kMissingSymbol) first_error = rc;
  }
  return Value<MemoryInfo>::fail(first_error);
}

Value<MemoryInfo> Device::memory_info_v1() const {
  if (api_->device_get_memory_info_v1 == nullptr) return Value<MemoryInfo>::fail(kMissingSymbol);
  abi::MemoryV1 m{};
  const abi::Return rc = api_->device_get_memory_info_v1(handle_, &m);
  if (rc != abi::kSuccess) return Value<MemoryInfo>::fail(rc);
  return checked(Value<MemoryInfo>::ok(MemoryInfo{m.total, m.free, m.used, std::nullopt}));
}

// ---- Device: PCIe -------------------------------------------------------------------------

Value<unsigned> Device::pcie_link_generation() const {
  return within(get_uint(api_->device_get_curr_pcie_link_generation, handle_), range::kPcieGenMin, range::kPcieGenMax);
}
Value<unsigned> Device::max_pcie_link_generation() const {
  return within(get_uint(api_->device_get_max_pcie_link_generation, handle_), range::kPcieGenMin, range::kPcieGenMax);
}
Value<unsigned> Device::gpu_max_pcie_link_generation() const {
  return within(get_uint(api_->device_get_gpu_max_pcie_link_generation, handle_), range::kPcieGenMin,
                range::kPcieGenMax);
}
Value<unsigned> Device::pcie_link_width() const {
  return within(get_uint(api_->device_get_curr_pcie_link_width, handle_), range::kPcieWidthMin, range::kPcieWidthMax);
}
Value<unsigned> Device::max_pcie_link_width() const {
  return within(get_uint(api_->device_get_max_pcie_link_width, handle_), range::kPcieWidthMin, range::kPcieWidthMax);
}
Value<unsigned> Device::pcie_throughput_kbps(PcieDirection direction) const {
  return within(get_uint_by_type(api_->device_get_pcie_throughput, handle_,
                                 direction == PcieDirection::kTx ? abi::kPcieUtilTxBytes : abi::kPcieUtilRxBytes),
                0u, range::kPcieKBpsMax);
}
Value<unsigned> Device::pcie_replay_counter() const { return get_uint(api_->device_get_pcie_replay_counter, handle_); }

// ---- Device: clocks, power, thermals -----------------------------------------------------

Value<unsigned> Device::clock_mhz(Clock clock) const {
  return within(get_uint_by_type(api_->device_get_clock_info, handle_, clock_type(clock)), range::kClockMhzMin,
                range::kClockMhzMax);
}
Value<unsigned> Device::max_clock_mhz(Clock clock) const {
  return within(get_uint_by_type(api_->device_get_max_clock_info, handle_, clock_type(clock)), range::kClockMhzMin,
                range::kClockMhzMax);
}

Value<uint64_t> Device::clocks_event_reasons() const {
  if (api_->device_get_current_clocks_event_reasons == nullptr) return Value<uint64_t>::fail(kMissingSymbol);
  unsigned long long v = 0;
  const abi::Return rc = api_->device_get_current_clocks_event_reasons(handle_, &v);
  return rc == abi::kSuccess ? Value<uint64_t>::ok(v) : Value<uint64_t>::fail(rc);
}

Value<int> Device::performance_state() const {
  if (api_->device_get_performance_state == nullptr) return Value<int>::fail(kMissingSymbol);
  int v = 0;
  const abi::Return rc = api_->device_get_performance_state(handle_, &v);
  return rc == abi::kSuccess ? Value<int>::ok(v) : Value<int>::fail(rc);
}

Value<unsigned> Device::power_usage_mw() const {
  return within(get_uint(api_->device_get_power_usage, handle_), 0u, range::kPowerMwMax);
}
Value<unsigned> Device::enforced_power_limit_mw() const {
  return within(get_uint(api_->device_get_enforced_power_limit, handle_), 0u, range::kPowerMwMax);
}

Value<unsigned> Device::default_power_limit_mw() const {
  return within(get_uint(api_->device_get_power_management_default_limit, handle_), 0u, range::kPowerMwMax);
}

Value<int> Device::temperature_c() const {
  abi::Return first_error = kMissingSymbol;
  if (api_->device_get_temperature_v != nullptr) {
    abi::TemperatureV1 t{};
    t.version = abi::kTemperatureV1Version;
    t.sensor_type = abi::kTemperatureGpu;
    const abi::Return rc = api_->device_get_temperature_v(handle_, &t);
    if (rc == abi::kSuccess) return checked_temperature(t.temperature);
    first_error = rc;
  }
  if (api_->device_get_temperature != nullptr) {
    unsigned v = 0;
    const abi::Return rc = api_->device_get_temperature(handle_, abi::kTemperatureGpu, &v);
    if (rc == abi::kSuccess) {
      return v > static_cast<unsigned>(range::kTemperatureCMax) ? Value<int>::fail(kOutOfRange)
                                                                : checked_temperature(static_cast<int>(v));
    }
    if (first_error == kMissingSymbol) first_error = rc;
  }
  return Value<int>::fail(first_error);
}

// ---- Device: modes and health ------------------------------------------------------------

Value<bool> Device::persistence_mode() const { return get_enable_state(api_->device_get_persistence_mode, handle_); }

Value<EccMode> Device::ecc_mode() const {
  if (api_->device_get_ecc_mode == nullptr) return Value<EccMode>::fail(kMissingSymbol);
  int current = 0;
  int pending = 0;
  const abi::Return rc = api_->device_get_ecc_mode(handle_, &current, &pending);
  if (rc != abi::kSuccess) return Value<EccMode>::fail(rc);
  return Value<EccMode>::ok(EccMode{current == abi::kFeatureEnabled, pending == abi::kFeatureEnabled});
}

Value<uint64_t> Device::total_ecc_errors(EccError type, EccCounter counter) const {
  if (api_->device_get_total_ecc_errors == nullptr) return Value<uint64_t>::fail(kMissingSymbol);
  unsigned long long v = 0;
  const abi::Return rc = api_->device_get_total_ecc_errors(
      handle_, type == EccError::kCorrected ? abi::kMemoryErrorCorrected : abi::kMemoryErrorUncorrected,
      counter == EccCounter::kVolatile ? abi::kVolatileEcc : abi::kAggregateEcc, &v);
  return rc == abi::kSuccess ? Value<uint64_t>::ok(v) : Value<uint64_t>::fail(rc);
}

Value<unsigned> Device::retired_pages(RetirementCause cause) const {
  const int c = cause == RetirementCause::kDoubleBit ? abi::kRetiredDoubleBit : abi::kRetiredMultipleSingleBit;
  // A real buffer rather than NULL: the header allows both "count 0 = size query" and
  // "INVALID_ARGUMENT if addresses is NULL". Boards retire at most a few dozen pages.
  std::vector<unsigned long long> addresses(256);
  std::vector<unsigned long long> timestamps(256);
  unsigned count = static_cast<unsigned>(addresses.size());
  abi::Return rc = kMissingSymbol;
  if (api_->device_get_retired_pages_v2 != nullptr) {
    rc = api_->device_get_retired_pages_v2(handle_, c, &count, addresses.data(), timestamps.data());
  } else if (api_->device_get_retired_pages != nullptr) {
    rc = api_->device_get_retired_pages(handle_, c, &count, addresses.data());
  }
  // INSUFFICIENT_SIZE still tells the count, which is all we want.
  if (rc == abi::kSuccess || rc == abi::kErrorInsufficientSize) return Value<unsigned>::ok(count);
  return Value<unsigned>::fail(rc);
}

Value<bool> Device::retired_pages_pending() const {
  return get_enable_state(api_->device_get_retired_pages_pending_status, handle_);
}

Value<RemappedRows> Device::remapped_rows() const {
  if (api_->device_get_remapped_rows == nullptr) return Value<RemappedRows>::fail(kMissingSymbol);
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  const abi::Return rc = api_->device_get_remapped_rows(handle_, &corr, &unc, &pending, &failure);
  if (rc != abi::kSuccess) return Value<RemappedRows>::fail(rc);
  return Value<RemappedRows>::ok(RemappedRows{corr, unc, pending != 0, failure != 0});
}

// ---- Device: activity ---------------------------------------------------------------------

Value<std::vector<ProcessInfo>> Device::compute_processes() const {
  using Out = Value<std::vector<ProcessInfo>>;
  auto convert = [](auto& raw, unsigned n) {
    std::vector<ProcessInfo> out;
    for (unsigned i = 0; i < n && i < raw.size(); ++i) {
      ProcessInfo p;
      p.pid = raw[i].pid;
      if (raw[i].used_gpu_memory != kValueNotAvailable) p.used_bytes = raw[i].used_gpu_memory;
      out.push_back(p);
    }
    return out;
  };
  // Processes come and go between calls: grow the buffer and retry a few times.
  unsigned capacity = 64;
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned n = capacity;
    abi::Return rc;
    if (api_->device_get_compute_running_processes_v2 != nullptr) {
      std::vector<abi::ProcessInfoV2> raw(capacity);
      rc = api_->device_get_compute_running_processes_v2(handle_, &n, raw.data());
      if (rc == abi::kSuccess) return Out::ok(convert(raw, n));
    } else if (api_->device_get_compute_running_processes_v1 != nullptr) {
      std::vector<abi::ProcessInfoV1> raw(capacity);
      rc = api_->device_get_compute_running_processes_v1(handle_, &n, raw.data());
      if (rc == abi::kSuccess) return Out::ok(convert(raw, n));
    } else {
      return Out::fail(kMissingSymbol);
    }
    if (rc != abi::kErrorInsufficientSize) return Out::fail(rc);
    capacity = std::max(capacity * 2, n + 16);
  }
  return Out::fail(abi::kErrorInsufficientSize);
}

Value<Utilization> Device::utilization() const {
  if (api_->device_get_utilization_rates == nullptr) return Value<Utilization>::fail(kMissingSymbol);
  abi::Utilization u{};
  const abi::Return rc = api_->device_get_utilization_rates(handle_, &u);
  if (rc != abi::kSuccess) return Value<Utilization>::fail(rc);
  if (u.gpu > range::kPctMax || u.memory > range::kPctMax) return Value<Utilization>::fail(kOutOfRange);
  return Value<Utilization>::ok(Utilization{u.gpu, u.memory});
}

// ---- Device: topology ---------------------------------------------------------------------

Value<std::vector<unsigned>> Device::cpu_affinity() const {
  using Out = Value<std::vector<unsigned>>;
  if (api_->device_get_cpu_affinity == nullptr) return Out::fail(kMissingSymbol);
  constexpr unsigned kWords = 64;  // 4096 CPUs with 64-bit longs
  std::vector<unsigned long> mask(kWords, 0);
  const abi::Return rc = api_->device_get_cpu_affinity(handle_, kWords, mask.data());
  if (rc != abi::kSuccess) return Out::fail(rc);
  std::vector<unsigned> cpus;
  constexpr unsigned kBits = sizeof(unsigned long) * 8;
  for (unsigned w = 0; w < kWords; ++w) {
    for (unsigned b = 0; b < kBits; ++b) {
      if ((mask[w] >> b) & 1ul) cpus.push_back(w * kBits + b);
    }
  }
  return Out::ok(std::move(cpus));
}

Value<unsigned> Device::numa_node_id() const { return get_uint(api_->device_get_numa_node_id, handle_); }

}  // namespace chokepoint::nvml
