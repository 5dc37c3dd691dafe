// The slice of the NVML C ABI that chokepoint uses, declared here rather than taken
// from nvml.h: the library is loaded with dlopen at run time (docs/ARCHITECTURE.md "Layers"), so one binary
// runs with whatever driver the machine has, and the build needs no CUDA toolkit.
//
// Every layout below was written from nvml.h of CUDA 13.0 (NVML 13.580) and checked with
// the static_asserts at the end; the sizes are what NVML's versioned entry points check
// (version word = sizeof | N << 24), so a wrong size shows up as
// NVML_ERROR_ARGUMENT_VERSION_MISMATCH instead of memory corruption. Enums are plain
// ints here (C enums are int-sized on every ABI NVML ships for).
#pragma once

#include <cstddef>
#include <cstdint>

namespace chokepoint::nvml::abi {

using Return = int;                         // nvmlReturn_t
using Device = struct DeviceOpaque*;        // nvmlDevice_t: opaque handle owned by NVML
using GpmSample = struct GpmSampleOpaque*;  // nvmlGpmSample_t

// nvmlReturn_t values we act on (the rest are passed to nvmlErrorString).
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr Return kErrorUnknown = 999;

// Buffer sizes NVML guarantees to be large enough (nvml.h *_BUFFER_SIZE, v2 where there is one).
inline constexpr unsigned kDriverVersionBufferSize = 80;
inline constexpr unsigned kNvmlVersionBufferSize = 80;
inline constexpr unsigned kDeviceNameBufferSize = 96;
inline constexpr unsigned kDeviceUuidBufferSize = 96;
inline constexpr unsigned kPciBusIdBufferSize = 32;
inline constexpr unsigned kPciBusIdLegacyBufferSize = 16;

// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;
// nvmlPcieUtilCounter_t
inline constexpr int kPcieUtilTxBytes = 0;
inline constexpr int kPcieUtilRxBytes = 1;
// nvmlTemperatureSensors_t
inline constexpr int kTemperatureGpu = 0;
// nvmlMemoryErrorType_t
inline constexpr int kMemoryErrorCorrected = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
// nvmlEccCounterType_t
inline constexpr int kVolatileEcc = 0;
inline constexpr int kAggregateEcc = 1;
// nvmlPageRetirementCause_t
inline constexpr int kRetiredMultipleSingleBit = 0;
inline constexpr int kRetiredDoubleBit = 1;
// nvmlEnableState_t
inline constexpr int kFeatureDisabled = 0;
inline constexpr int kFeatureEnabled = 1;

// nvmlPciInfo_t (filled by nvmlDeviceGetPciInfo_v3 / _v2).
struct PciInfo {
  char bus_id_legacy[kPciBusIdLegacyBufferSize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;  // 16-bit device id << 16 | 16-bit vendor id
  unsigned int pci_subsystem_id;
  char bus_id[kPciBusIdBufferSize];  // "%08X:%02X:%02X.0"
};

// nvmlMemory_t (v1, nvmlDeviceGetMemoryInfo): used includes the driver's reservation.
struct MemoryV1 {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlMemory_v2_t (nvmlDeviceGetMemoryInfo_v2): version must be kMemoryV2Version.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr unsigned kMemoryV2Version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);

// nvmlProcessInfo_v1_t (nvmlDeviceGetComputeRunningProcesses, drivers before r470).
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long used_gpu_memory;
};

// nvmlProcessInfo_t == nvmlProcessInfo_v2_t: the element type of both
// nvmlDeviceGetComputeRunningProcesses_v2 and _v3 (v3 changed semantics, not layout).
struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // NVML_VALUE_NOT_AVAILABLE (~0ull) when unknown
  unsigned int gpu_instance_id;        // 0xFFFFFFFF without MIG
  unsigned int compute_instance_id;
};

// nvmlUtilization_t
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlTemperature_v1_t (nvmlDeviceGetTemperatureV, r565+; the old call is deprecated in 13.0).
struct TemperatureV1 {
  unsigned int version;
  int sensor_type;
  int temperature;
};
inline constexpr unsigned kTemperatureV1Version = static_cast<unsigned>(sizeof(TemperatureV1)) | (1u << 24);

// nvmlGpmSupport_t: zero it, set version, call nvmlGpmQueryDeviceSupport.
struct GpmSupport {
  unsigned int version;
  unsigned int is_supported_device;
};
inline constexpr unsigned kGpmSupportVersion = 1;

// nvmlGpmMetric_t
struct GpmMetric {
  unsigned int metric_id;
  Return nvml_return;  // this metric's own status: value is garbage unless kSuccess
  double value;
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } metric_info;
};

// nvmlGpmMetricsGet_t. nvml.h sizes metrics[] with NVML_GPM_METRIC_MAX, which changed
// between releases (98 in CUDA 12.x, 210 in 13.0, 333 later) while the version word stayed
// 1. We size the array for the largest header we know so a driver that touches its whole
// array cannot write past ours, and ask for at most kGpmMaxMetricsPerCall metrics per call
// so the oldest driver's bound check never rejects the request.
inline constexpr unsigned kGpmMetricsCapacity = 333;
inline constexpr unsigned kGpmMaxMetricsPerCall = 98 - 1;  // ids are 1-based; MAX is "above +1"
struct GpmMetricsGet {
  unsigned int version;
  unsigned int num_metrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricsCapacity];
};
inline constexpr unsigned kGpmMetricsGetVersion = 1;

// Function pointer types, one per entry point we may resolve.
extern "C" {
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetStringFn = Return (*)(char*, unsigned int);  // driver / NVML version
using SystemGetCudaDriverVersionFn = Return (*)(int*);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);  // name, UUID
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetMemoryV1Fn = Return (*)(Device, MemoryV1*);
using DeviceGetMemoryV2Fn = Return (*)(Device, MemoryV2*);
using DeviceGetUintFn = Return (*)(Device, unsigned int*);             // link gen/width, power, replay ...
using DeviceGetUintByTypeFn = Return (*)(Device, int, unsigned int*);  // clocks, PCIe throughput, temp
using DeviceGetUllFn = Return (*)(Device, unsigned long long*);        // clocks event reasons
using DeviceGetIntFn = Return (*)(Device, int*);                       // enable states, pstate
using DeviceGetTemperatureVFn = Return (*)(Device, TemperatureV1*);
using DeviceGetEccModeFn = Return (*)(Device, int*, int*);
using DeviceGetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using DeviceGetRetiredPagesFn = Return (*)(Device, int, unsigned int*, unsigned long long*);
using DeviceGetRetiredPagesV2Fn = Return (*)(Device, int, unsigned int*, unsigned long long*, unsigned long long*);
using DeviceGetRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*);
using DeviceGetProcessesV1Fn = Return (*)(Device, unsigned int*, ProcessInfoV1*);
using DeviceGetProcessesV2Fn = Return (*)(Device, unsigned int*, ProcessInfoV2*);
using DeviceGetCpuAffinityFn = Return (*)(Device, unsigned int, unsigned long*);
using DeviceGetUtilizationFn = Return (*)(Device, Utilization*);
using DeviceGetComputeCapabilityFn = Return (*)(Device, int*, int*);
using GpmQueryDeviceSupportFn = Return (*)(Device, GpmSupport*);
using GpmSampleAllocFn = Return (*)(GpmSample*);
using GpmSampleFreeFn = Return (*)(GpmSample);
using GpmSampleGetFn = Return (*)(Device, GpmSample);
using GpmMetricsGetFn = Return (*)(GpmMetricsGet*);
}

// Layouts as nvml.h (CUDA 13.0) defines them on x86_64 / aarch64 Linux (LP64).
static_assert(sizeof(PciInfo) == 68 && offsetof(PciInfo, domain) == 16 && offsetof(PciInfo, bus_id) == 36,
              "nvmlPciInfo_t layout");
static_assert(sizeof(MemoryV1) == 24, "nvmlMemory_t layout");
static_assert(sizeof(MemoryV2) == 40 && offsetof(MemoryV2, total) == 8 && offsetof(MemoryV2, used) == 32,
              "nvmlMemory_v2_t layout");
static_assert(kMemoryV2Version == 0x02000028u, "nvmlMemory_v2 version word");
static_assert(sizeof(ProcessInfoV1) == 16, "nvmlProcessInfo_v1_t layout");
static_assert(sizeof(ProcessInfoV2) == 24 && offsetof(ProcessInfoV2, used_gpu_memory) == 8 &&
                  offsetof(ProcessInfoV2, gpu_instance_id) == 16,
              "nvmlProcessInfo_t layout");
static_assert(sizeof(TemperatureV1) == 12 && kTemperatureV1Version == 0x0100000Cu, "nvmlTemperature_v1_t layout");
static_assert(sizeof(GpmSupport) == 8, "nvmlGpmSupport_t layout");
static_assert(sizeof(GpmMetric) == 40 && offsetof(GpmMetric, value) == 8 && offsetof(GpmMetric, metric_info) == 16,
              "nvmlGpmMetric_t layout");
static_assert(offsetof(GpmMetricsGet, sample1) == 8 && offsetof(GpmMetricsGet, metrics) == 24,
              "nvmlGpmMetricsGet_t header layout");

}  // namespace chokepoint::nvml::abi
