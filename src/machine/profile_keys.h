// The JSON keys of a bench profile ("chokepoint.profile/1", machine/profile.h) that the
// GPU benchmark module writes (bench/cuda/module_entry.cu) and the machine layer reads and
// completes (machine/profile.cc), and the keys of the module's options (bench/module_api.h,
// written by bench/bench_run.cc): one spelling on both sides of the module boundary. Plain
// C++17 (the module is compiled by nvcc).
#pragma once

namespace chokepoint::machine::profile_key {

// Written by the module (the raw profile).
inline constexpr char kSchema[] = "schema";
inline constexpr char kMode[] = "mode";
inline constexpr char kGpus[] = "gpus";
inline constexpr char kResults[] = "results";
inline constexpr char kError[] = "error";
inline constexpr char kIndex[] = "index";
inline constexpr char kName[] = "name";
inline constexpr char kUuid[] = "uuid";
inline constexpr char kPciBusId[] = "pci_bus_id";
inline constexpr char kCc[] = "cc";
inline constexpr char kSms[] = "sms";
inline constexpr char kMemoryBytes[] = "memory_bytes";
inline constexpr char kFreeMemoryBytes[] = "free_memory_bytes";
inline constexpr char kL2Bytes[] = "l2_bytes";
inline constexpr char kSmClockMaxMhz[] = "sm_clock_max_mhz";
inline constexpr char kMemClockMaxMhz[] = "mem_clock_max_mhz";
inline constexpr char kMemBusWidthBits[] = "mem_bus_width_bits";
inline constexpr char kEcc[] = "ecc";
inline constexpr char kAsyncEngines[] = "async_engines";
inline constexpr char kSmClockUnderLoadMhz[] = "sm_clock_under_load_mhz";
inline constexpr char kPcie[] = "pcie";
inline constexpr char kSpeedUnderLoad[] = "speed_under_load";
inline constexpr char kWidthUnderLoad[] = "width_under_load";
inline constexpr char kKey[] = "key";
inline constexpr char kDescription[] = "description";
inline constexpr char kUnit[] = "unit";
inline constexpr char kStatus[] = "status";
inline constexpr char kValue[] = "value";
inline constexpr char kSamples[] = "samples";
inline constexpr char kNote[] = "note";
inline constexpr char kSeconds[] = "seconds";
inline constexpr char kClockMhz[] = "clock_mhz";
inline constexpr char kCudaRuntime[] = "cuda_runtime";
inline constexpr char kCudaDriver[] = "cuda_driver";
inline constexpr char kCublaslt[] = "cublaslt";
inline constexpr char kCublasltNote[] = "cublaslt_note";

// The module's options and its list of testcases.
inline constexpr char kDevices[] = "devices";
inline constexpr char kOnly[] = "only";
inline constexpr char kList[] = "list";
inline constexpr char kTestcases[] = "testcases";
inline constexpr char kSelftest[] = "selftest";

}  // namespace chokepoint::machine::profile_key
