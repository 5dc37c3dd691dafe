// A fake libnvidia-ml.so for CI: exports the NVML entry points chokepoint binds and
// answers from a scenario file ($FAKE_NVML_CONFIG, see fake_config.h), so the real
// dlopen/dlsym path of src/sampler/nvml runs on machines without a GPU.
//
// Built three ways (tests/fake_nvml/CMakeLists.txt):
//   libfake_nvml.so         today's driver: newest names; the legacy names it also exports
//                           answer NVML_ERROR_UNKNOWN, so a loader that binds an old name
//                           where a newer one exists fails the tests.
//   libfake_nvml_legacy.so  an old driver (FAKE_NVML_LEGACY): only unversioned/old names,
//                           no GPM, no remapped rows, no TemperatureV.
//   libfake_nvml_noinit.so  not an NVML at all (FAKE_NVML_NO_INIT): lacks nvmlInit.
// Like a real driver it checks struct version words and returns
// NVML_ERROR_UNINITIALIZED before nvmlInit.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fake_config.h"
#include "sampler/nvml/nvml_abi.h"

namespace abi = chokepoint::nvml::abi;
using abi::Return;

namespace {

constexpr int kMaxDevices = 16;
struct FakeDevice {
  int index;
};
FakeDevice g_devices[kMaxDevices];
fake_nvml::Config g_config;
int g_init_count = 0;

struct FakeSample {
  int device = -1;
  unsigned long long sequence = 0;
};
[[maybe_unused]] unsigned long long g_sample_sequence = 0;

std::string dkey(int index, const char* key) { return "gpu" + std::to_string(index) + "." + key; }

unsigned device_count() {
  unsigned n = 0;
  g_config.number("device_count", &n);
  return n > kMaxDevices ? kMaxDevices : n;
}

// Validates a handle; returns its index or -1.
int index_of(abi::Device h) {
  auto* d = reinterpret_cast<FakeDevice*>(h);
  if (d < g_devices || d >= g_devices + kMaxDevices) return -1;
  if (static_cast<unsigned>(d->index) >= device_count()) return -1;
  return d->index;
}

#define REQUIRE_INIT() \
  if (g_init_count <= 0) return abi::kErrorUninitialized
#define DEVICE_INDEX(h)        \
  REQUIRE_INIT();              \
  const int idx = index_of(h); \
  if (idx < 0) return abi::kErrorInvalidArgument

Return copy_string(const std::string& key, char* out, unsigned length) {
  std::string s;
  if (Return rc = g_config.text(key, &s); rc != 0) return rc;
  if (out == nullptr || s.size() + 1 > length) return abi::kErrorInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return abi::kSuccess;
}

template <typename T>
Return device_number(abi::Device h, const char* key, T* out) {
  DEVICE_INDEX(h);
  if (out == nullptr) return abi::kErrorInvalidArgument;
  return g_config.number(dkey(idx, key), out);
}

[[maybe_unused]] Return init_impl() {
  g_config.load(std::getenv("FAKE_NVML_CONFIG"));
  int init_error = 0;
  if (g_config.number("init_error", &init_error) == 0 && init_error != 0) return init_error;
  for (int i = 0; i < kMaxDevices; ++i) g_devices[i].index = i;
  ++g_init_count;
  return abi::kSuccess;
}

const char* clock_key(int type, bool max) {
  switch (type) {
    case abi::kClockGraphics: return max ? "max_clock_graphics" : "clock_graphics";
    case abi::kClockSm: return max ? "max_clock_sm" : "clock_sm";
    case abi::kClockMem: return max ? "max_clock_mem" : "clock_mem";
  }
  return nullptr;
}

Return ecc_count_impl(abi::Device h, int type, int counter, unsigned long long* out) {
  const char* key = nullptr;
  if (counter == abi::kVolatileEcc)
    key = type == abi::kMemoryErrorCorrected ? "ecc_volatile_corrected" : "ecc_volatile_uncorrected";
  if (counter == abi::kAggregateEcc)
    key = type == abi::kMemoryErrorCorrected ? "ecc_aggregate_corrected" : "ecc_aggregate_uncorrected";
  if (key == nullptr) return abi::kErrorInvalidArgument;
  return device_number(h, key, out);
}

Return retired_impl(abi::Device h, int cause, unsigned* count, unsigned long long* addresses,
                    unsigned long long* timestamps) {
  DEVICE_INDEX(h);
  if (count == nullptr) return abi::kErrorInvalidArgument;
  unsigned n = 0;
  const char* key = cause == abi::kRetiredDoubleBit ? "retired_pages_dbe" : "retired_pages_sbe";
  if (Return rc = g_config.number(dkey(idx, key), &n); rc != 0) return rc;
  if (n > *count) {
    *count = n;
    return abi::kErrorInsufficientSize;
  }
  if (addresses == nullptr && n > 0) return abi::kErrorInvalidArgument;
  for (unsigned i = 0; i < n; ++i) {
    addresses[i] = 0x1000ull * (i + 1);
    if (timestamps != nullptr) timestamps[i] = 1700000000ull + i;
  }
  *count = n;
  return abi::kSuccess;
}

// "pid:bytes, pid:-" ('-' = NVML_VALUE_NOT_AVAILABLE).
struct FakeProcess {
  unsigned pid;
  unsigned long long bytes;
};
Return processes(int idx, std::vector<FakeProcess>* out) {
  std::string s;
  if (Return rc = g_config.text(dkey(idx, "processes"), &s); rc != 0) return rc;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    const std::string item = fake_nvml::Config::trim(s.substr(pos, comma - pos));
    pos = comma + 1;
    const auto colon = item.find(':');
    if (item.empty() || colon == std::string::npos) continue;
    const std::string bytes = fake_nvml::Config::trim(item.substr(colon + 1));
    out->push_back({static_cast<unsigned>(std::strtoul(item.c_str(), nullptr, 10)),
                    bytes == "-" ? ~0ull : fake_nvml::Config::parse_number(bytes)});
  }
  return abi::kSuccess;
}

template <typename Info>
Return processes_impl(abi::Device h, unsigned* count, Info* infos) {
  DEVICE_INDEX(h);
  if (count == nullptr) return abi::kErrorInvalidArgument;
  std::vector<FakeProcess> procs;
  if (Return rc = processes(idx, &procs); rc != 0) return rc;
  if (procs.size() > *count) {
    *count = static_cast<unsigned>(procs.size());
    return abi::kErrorInsufficientSize;
  }
  if (infos == nullptr && !procs.empty()) return abi::kErrorInvalidArgument;
  for (size_t i = 0; i < procs.size(); ++i) {
    Info info{};
    info.pid = procs[i].pid;
    info.used_gpu_memory = procs[i].bytes;
    if constexpr (sizeof(Info) == sizeof(abi::ProcessInfoV2)) {
      info.gpu_instance_id = 0xFFFFFFFFu;
      info.compute_instance_id = 0xFFFFFFFFu;
    }
    infos[i] = info;
  }
  *count = static_cast<unsigned>(procs.size());
  return abi::kSuccess;
}

struct Memory {
  unsigned long long total = 0, reserved = 0, used = 0;
};
Return memory(abi::Device h, Memory* m) {
  DEVICE_INDEX(h);
  if (Return rc = g_config.number(dkey(idx, "memory_total"), &m->total); rc != 0) return rc;
  g_config.number(dkey(idx, "memory_reserved"), &m->reserved);
  g_config.number(dkey(idx, "memory_used"), &m->used);
  return abi::kSuccess;
}

}  // namespace

extern "C" {

// ---- init and system ----------------------------------------------------------------------
#ifndef FAKE_NVML_NO_INIT
#ifdef FAKE_NVML_LEGACY
Return nvmlInit() { return init_impl(); }
Return nvmlDeviceGetCount(unsigned* n) {
  REQUIRE_INIT();
  *n = device_count();
  return abi::kSuccess;
}
Return nvmlDeviceGetHandleByIndex(unsigned i, abi::Device* h) {
  REQUIRE_INIT();
  if (i >= device_count()) return abi::kErrorInvalidArgument;
  *h = reinterpret_cast<abi::Device>(&g_devices[i]);
  return abi::kSuccess;
}
#else
Return nvmlInit_v2() { return init_impl(); }
Return nvmlDeviceGetCount_v2(unsigned* n) {
  REQUIRE_INIT();
  if (n == nullptr) return abi::kErrorInvalidArgument;
  *n = device_count();
  return abi::kSuccess;
}
Return nvmlDeviceGetHandleByIndex_v2(unsigned i, abi::Device* h) {
  REQUIRE_INIT();
  if (h == nullptr || i >= device_count()) return abi::kErrorInvalidArgument;
  int lost = 0;
  if (g_config.number(dkey(static_cast<int>(i), "handle_error"), &lost) == 0 && lost != 0) return lost;
  *h = reinterpret_cast<abi::Device>(&g_devices[i]);
  return abi::kSuccess;
}
// What a current driver still exports for old binaries; a loader must not pick these.
Return nvmlInit() { return abi::kErrorUnknown; }
Return nvmlDeviceGetCount(unsigned*) { return abi::kErrorUnknown; }
Return nvmlDeviceGetHandleByIndex(unsigned, abi::Device*) { return abi::kErrorUnknown; }
Return nvmlDeviceGetPciInfo_v2(abi::Device, abi::PciInfo*) { return abi::kErrorUnknown; }
Return nvmlSystemGetCudaDriverVersion(int*) { return abi::kErrorUnknown; }
Return nvmlDeviceGetComputeRunningProcesses_v2(abi::Device, unsigned*, abi::ProcessInfoV2*) {
  return abi::kErrorUnknown;
}
Return nvmlDeviceGetCurrentClocksThrottleReasons(abi::Device, unsigned long long*) { return abi::kErrorUnknown; }
#endif
#endif  // FAKE_NVML_NO_INIT

Return nvmlShutdown() {
  REQUIRE_INIT();
  --g_init_count;
  return abi::kSuccess;
}

const char* nvmlErrorString(Return rc) {
  switch (rc) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    case 25: return "Argument version mismatch";
    case 999: return "Unknown Error";
  }
  return "Fake NVML error";
}

Return nvmlSystemGetDriverVersion(char* out, unsigned length) {
  REQUIRE_INIT();
  return copy_string("driver_version", out, length);
}
Return nvmlSystemGetNVMLVersion(char* out, unsigned length) {
  REQUIRE_INIT();
  return copy_string("nvml_version", out, length);
}
#ifdef FAKE_NVML_LEGACY
Return nvmlSystemGetCudaDriverVersion(int* v) {
#else
Return nvmlSystemGetCudaDriverVersion_v2(int* v) {
#endif
  REQUIRE_INIT();
  return g_config.number("cuda_driver_version", v);
}

// ---- identity -----------------------------------------------------------------------------
Return nvmlDeviceGetName(abi::Device h, char* out, unsigned length) {
  DEVICE_INDEX(h);
  return copy_string(dkey(idx, "name"), out, length);
}
Return nvmlDeviceGetUUID(abi::Device h, char* out, unsigned length) {
  DEVICE_INDEX(h);
  return copy_string(dkey(idx, "uuid"), out, length);
}
#ifdef FAKE_NVML_LEGACY
Return nvmlDeviceGetPciInfo_v2(abi::Device h, abi::PciInfo* p) {
#else
Return nvmlDeviceGetPciInfo_v3(abi::Device h, abi::PciInfo* p) {
#endif
  DEVICE_INDEX(h);
  std::string bus_id;
  if (Return rc = g_config.text(dkey(idx, "pci_bus_id"), &bus_id); rc != 0) return rc;
  *p = abi::PciInfo{};
  std::sscanf(bus_id.c_str(), "%x:%x:%x", &p->domain, &p->bus, &p->device);
  std::snprintf(p->bus_id, sizeof p->bus_id, "%08X:%02X:%02X.0", p->domain, p->bus, p->device);
  std::snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "%04X:%02X:%02X.0", p->domain & 0xffff, p->bus, p->device);
  g_config.number(dkey(idx, "pci_device_id"), &p->pci_device_id);
  return abi::kSuccess;
}
Return nvmlDeviceGetCudaComputeCapability(abi::Device h, int* major, int* minor) {
  DEVICE_INDEX(h);
  std::string cc;
  if (Return rc = g_config.text(dkey(idx, "compute_capability"), &cc); rc != 0) return rc;
  if (std::sscanf(cc.c_str(), "%d.%d", major, minor) != 2) return abi::kErrorUnknown;
  return abi::kSuccess;
}

// ---- memory -------------------------------------------------------------------------------
#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetMemoryInfo_v2(abi::Device h, abi::MemoryV2* out) {
  if (out == nullptr) return abi::kErrorInvalidArgument;
  if (out->version != abi::kMemoryV2Version) return abi::kErrorArgumentVersionMismatch;
  Memory m;
  if (Return rc = memory(h, &m); rc != 0) return rc;
  out->total = m.total;
  out->reserved = m.reserved;
  out->used = m.used;
  out->free = m.total - m.reserved - m.used;
  return abi::kSuccess;
}
#endif
Return nvmlDeviceGetMemoryInfo(abi::Device h, abi::MemoryV1* out) {
  Memory m;
  if (Return rc = memory(h, &m); rc != 0) return rc;
  out->total = m.total;
  out->used = m.used + m.reserved;  // v1 counts the driver's reservation as used
  out->free = m.total - out->used;
  return abi::kSuccess;
}

// ---- PCIe ---------------------------------------------------------------------------------
Return nvmlDeviceGetCurrPcieLinkGeneration(abi::Device h, unsigned* v) {
  return device_number(h, "pcie_gen_current", v);
}
Return nvmlDeviceGetMaxPcieLinkGeneration(abi::Device h, unsigned* v) { return device_number(h, "pcie_gen_max", v); }
#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetGpuMaxPcieLinkGeneration(abi::Device h, unsigned* v) {
  return device_number(h, "pcie_gen_gpu_max", v);
}
#endif
Return nvmlDeviceGetCurrPcieLinkWidth(abi::Device h, unsigned* v) { return device_number(h, "pcie_width_current", v); }
Return nvmlDeviceGetMaxPcieLinkWidth(abi::Device h, unsigned* v) { return device_number(h, "pcie_width_max", v); }
Return nvmlDeviceGetPcieThroughput(abi::Device h, int counter, unsigned* v) {
  if (counter != abi::kPcieUtilTxBytes && counter != abi::kPcieUtilRxBytes) return abi::kErrorInvalidArgument;
  return device_number(h, counter == abi::kPcieUtilTxBytes ? "pcie_tx_kbps" : "pcie_rx_kbps", v);
}
Return nvmlDeviceGetPcieReplayCounter(abi::Device h, unsigned* v) { return device_number(h, "pcie_replay", v); }

// ---- clocks, power, thermals --------------------------------------------------------------
Return nvmlDeviceGetClockInfo(abi::Device h, int type, unsigned* v) {
  const char* key = clock_key(type, false);
  return key == nullptr ? abi::kErrorInvalidArgument : device_number(h, key, v);
}
Return nvmlDeviceGetMaxClockInfo(abi::Device h, int type, unsigned* v) {
  const char* key = clock_key(type, true);
  return key == nullptr ? abi::kErrorInvalidArgument : device_number(h, key, v);
}
#ifdef FAKE_NVML_LEGACY
Return nvmlDeviceGetCurrentClocksThrottleReasons(abi::Device h, unsigned long long* v) {
#else
Return nvmlDeviceGetCurrentClocksEventReasons(abi::Device h, unsigned long long* v) {
#endif
  return device_number(h, "clocks_event_reasons", v);
}
Return nvmlDeviceGetPerformanceState(abi::Device h, int* v) { return device_number(h, "pstate", v); }
Return nvmlDeviceGetPowerUsage(abi::Device h, unsigned* v) { return device_number(h, "power_mw", v); }
Return nvmlDeviceGetEnforcedPowerLimit(abi::Device h, unsigned* v) { return device_number(h, "power_limit_mw", v); }
Return nvmlDeviceGetPowerManagementDefaultLimit(abi::Device h, unsigned* v) {
  return device_number(h, "power_default_limit_mw", v);
}
#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetTemperatureV(abi::Device h, abi::TemperatureV1* t) {
  if (t == nullptr) return abi::kErrorInvalidArgument;
  if (t->version != abi::kTemperatureV1Version) return abi::kErrorArgumentVersionMismatch;
  if (t->sensor_type != abi::kTemperatureGpu) return abi::kErrorInvalidArgument;
  return device_number(h, "temperature_c", &t->temperature);
}
#endif
Return nvmlDeviceGetTemperature(abi::Device h, int sensor, unsigned* v) {
  if (sensor != abi::kTemperatureGpu) return abi::kErrorInvalidArgument;
  return device_number(h, "temperature_c", v);
}

// ---- modes and health ---------------------------------------------------------------------
Return nvmlDeviceGetPersistenceMode(abi::Device h, int* v) { return device_number(h, "persistence_mode", v); }
Return nvmlDeviceGetEccMode(abi::Device h, int* current, int* pending) {
  DEVICE_INDEX(h);
  std::string s;
  if (Return rc = g_config.text(dkey(idx, "ecc_mode"), &s); rc != 0) return rc;
  if (std::sscanf(s.c_str(), "%d %d", current, pending) != 2) return abi::kErrorUnknown;
  return abi::kSuccess;
}
Return nvmlDeviceGetTotalEccErrors(abi::Device h, int type, int counter, unsigned long long* v) {
  return ecc_count_impl(h, type, counter, v);
}
Return nvmlDeviceGetRetiredPages(abi::Device h, int cause, unsigned* count, unsigned long long* addresses) {
  return retired_impl(h, cause, count, addresses, nullptr);
}
#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetRetiredPages_v2(abi::Device h, int cause, unsigned* count, unsigned long long* addresses,
                                    unsigned long long* timestamps) {
  return retired_impl(h, cause, count, addresses, timestamps);
}
#endif
Return nvmlDeviceGetRetiredPagesPendingStatus(abi::Device h, int* v) {
  return device_number(h, "retired_pages_pending", v);
}
#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetRemappedRows(abi::Device h, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failure) {
  DEVICE_INDEX(h);
  std::string s;
  if (Return rc = g_config.text(dkey(idx, "remapped_rows"), &s); rc != 0) return rc;
  if (std::sscanf(s.c_str(), "%u %u %u %u", corr, unc, pending, failure) != 4) return abi::kErrorUnknown;
  return abi::kSuccess;
}
#endif

// ---- activity -----------------------------------------------------------------------------
#ifdef FAKE_NVML_LEGACY
Return nvmlDeviceGetComputeRunningProcesses(abi::Device h, unsigned* count, abi::ProcessInfoV1* infos) {
  return processes_impl(h, count, infos);
}
#else
Return nvmlDeviceGetComputeRunningProcesses_v3(abi::Device h, unsigned* count, abi::ProcessInfoV2* infos) {
  return processes_impl(h, count, infos);
}
#endif
Return nvmlDeviceGetUtilizationRates(abi::Device h, abi::Utilization* u) {
  DEVICE_INDEX(h);
  std::string s;
  if (Return rc = g_config.text(dkey(idx, "utilization"), &s); rc != 0) return rc;
  if (std::sscanf(s.c_str(), "%u %u", &u->gpu, &u->memory) != 2) return abi::kErrorUnknown;
  return abi::kSuccess;
}

// ---- topology -----------------------------------------------------------------------------
Return nvmlDeviceGetCpuAffinity(abi::Device h, unsigned words, unsigned long* set) {
  DEVICE_INDEX(h);
  if (words == 0 || set == nullptr) return abi::kErrorInvalidArgument;
  std::string s;
  if (Return rc = g_config.text(dkey(idx, "cpu_affinity"), &s); rc != 0) return rc;
  std::memset(set, 0, words * sizeof(unsigned long));
  constexpr unsigned kBits = sizeof(unsigned long) * 8;
  unsigned lo = 0, hi = 0;
  for (const char* p = s.c_str(); *p != '\0';) {
    const int got = std::sscanf(p, "%u-%u", &lo, &hi);
    if (got < 1) break;
    if (got == 1) hi = lo;
    for (unsigned c = lo; c <= hi && c < words * kBits; ++c) set[c / kBits] |= 1ul << (c % kBits);
    const char* comma = std::strchr(p, ',');
    if (comma == nullptr) break;
    p = comma + 1;
  }
  return abi::kSuccess;
}
#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetNumaNodeId(abi::Device h, unsigned* v) { return device_number(h, "numa_node_id", v); }

// ---- GPM ----------------------------------------------------------------------------------
Return nvmlGpmQueryDeviceSupport(abi::Device h, abi::GpmSupport* s) {
  DEVICE_INDEX(h);
  if (s == nullptr) return abi::kErrorInvalidArgument;
  if (s->version != abi::kGpmSupportVersion) return abi::kErrorArgumentVersionMismatch;
  unsigned v = 0;
  if (Return rc = g_config.number(dkey(idx, "gpm_supported"), &v); rc != 0) return rc;
  s->is_supported_device = v;
  return abi::kSuccess;
}
Return nvmlGpmSampleAlloc(abi::GpmSample* out) {
  REQUIRE_INIT();
  if (out == nullptr) return abi::kErrorInvalidArgument;
  *out = reinterpret_cast<abi::GpmSample>(new FakeSample());
  return abi::kSuccess;
}
Return nvmlGpmSampleFree(abi::GpmSample s) {
  delete reinterpret_cast<FakeSample*>(s);
  return abi::kSuccess;
}
Return nvmlGpmSampleGet(abi::Device h, abi::GpmSample s) {
  DEVICE_INDEX(h);
  if (s == nullptr) return abi::kErrorInvalidArgument;
  unsigned supported = 0;
  g_config.number(dkey(idx, "gpm_supported"), &supported);
  if (supported == 0) return abi::kErrorNotSupported;
  auto* f = reinterpret_cast<FakeSample*>(s);
  f->device = idx;
  f->sequence = ++g_sample_sequence;
  return abi::kSuccess;
}
Return nvmlGpmMetricsGet(abi::GpmMetricsGet* m) {
  REQUIRE_INIT();
  if (m == nullptr) return abi::kErrorInvalidArgument;
  if (m->version != abi::kGpmMetricsGetVersion) return abi::kErrorArgumentVersionMismatch;
  // The oldest NVML_GPM_METRIC_MAX (98): more would overrun such a driver's array.
  if (m->num_metrics == 0 || m->num_metrics >= 98) return abi::kErrorInvalidArgument;
  auto* a = reinterpret_cast<FakeSample*>(m->sample1);
  auto* b = reinterpret_cast<FakeSample*>(m->sample2);
  if (a == nullptr || b == nullptr || a->device < 0 || a->device != b->device || b->sequence <= a->sequence) {
    return abi::kErrorInvalidArgument;
  }
  static char unit_pct[] = "%";
  static char unit_mibs[] = "MiB/s";
  static char name_buf[98][24];
  for (unsigned i = 0; i < m->num_metrics; ++i) {
    abi::GpmMetric& metric = m->metrics[i];
    const std::string key = dkey(a->device, "gpm.") + std::to_string(metric.metric_id);
    metric.nvml_return = g_config.number(key, &metric.value);
    if (metric.nvml_return == 0) {
      // Decimal values: number() parses integers only, so read the text again.
      std::string text;
      g_config.text(key, &text);
      metric.value = std::strtod(text.c_str(), nullptr);
    }
    std::snprintf(name_buf[i], sizeof name_buf[i], "fake_metric_%u", metric.metric_id);
    metric.metric_info.short_name = name_buf[i];
    metric.metric_info.long_name = name_buf[i];
    metric.metric_info.unit = metric.metric_id == 20 || metric.metric_id == 21 ? unit_mibs : unit_pct;
  }
  return abi::kSuccess;
}
#endif  // FAKE_NVML_LEGACY

}  // extern "C"
