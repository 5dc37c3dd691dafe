// Machine profile: what `chokepoint bench` measured on each GPU of a machine, with the
// judgement against the published figure of that GPU. It is both the bench report
// (`bench --json`) and the file `bench --save` leaves for `analyze`/`run`, whose
// ceilings then come from the measurement (profile_store.h, ceilings.h).
//
// A value that was not measured is nullopt and a testcase that could not run says why
// (status waived/failed + note): nothing here is ever a made-up 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace chokepoint::machine {

inline constexpr const char* kProfileSchema = "chokepoint.profile/1";

enum class ResultStatus { kOk, kWaived, kFailed };
const char* to_string(ResultStatus s);

// One testcase on one GPU.
struct Measurement {
  std::string key;  // stable id, e.g. "h2d_pinned", "gemm_bf16"
  std::string description;
  std::string unit;  // "GB/s", "TFLOP/s", "TOP/s", "us", "err/tol"
  ResultStatus status = ResultStatus::kOk;
  std::optional<double> value;      // median of the runs
  std::vector<double> samples;      // one value per run
  std::string note;                 // how it was measured, or why it was waived / failed
  double seconds = 0;               // wall time the testcase took
  std::optional<double> clock_mhz;  // SM clock right after the measurement (GEMMs)

  // Judgement, filled by bench (bench/judge.h); absent in the module's raw output.
  std::optional<double> reference;         // published or expected figure, same unit
  std::string reference_source;            // "published:H200 SXM", "expected:..."
  std::optional<double> pct_of_reference;  // higher is better, also for latencies
  std::optional<double> par_pct;           // below this percentage the verdict is "below par"
  std::string verdict;                     // "ok" | "below par" | "above published" | "info" | "waived" | "failed"
  std::string cause;                       // the likely cause when not ok, else a remark
  // The engine's rules behind `cause`, in its order (rules/registry.cc: the ids doctor,
  // run and analyze report, e.g. "pcie-link-degraded"); empty for a generic cause.
  std::vector<std::string> cause_rules;
};

// What a testcase measures, for the causes of a result below par: which part of the
// machine can hold it back (bench/expectations.h gives each testcase's).
enum class BenchGroup { kPcie, kPageable, kDram, kL2, kLaunch, kCompute, kSelftest };

// One likely cause of a result below par: the rule that found it and its sentence.
struct BenchCause {
  std::string rule;
  std::string text;
};

// Roofline ridge point: the arithmetic intensity (FLOP per byte of DRAM traffic) above
// which a kernel of that precision is compute-bound on this GPU.
struct RidgePoint {
  std::string precision;  // "bf16"
  double tflops = 0;
  double hbm_gbps = 0;  // DRAM traffic (read + write) per second
  double flop_per_byte = 0;
  std::optional<double> published_flop_per_byte;
};

struct GpuProfile {
  int index = -1;          // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-xxxxxxxx-..."
  std::string pci_bus_id;  // "0000:3b:00.0" (sysfs spelling)
  int cc_major = -1, cc_minor = -1;
  int num_sms = -1;
  int64_t memory_bytes = -1;
  int64_t free_memory_bytes = -1;  // at the start, before bench allocated anything
  int64_t l2_bytes = -1;
  int sm_clock_max_mhz = -1;
  int mem_clock_max_mhz = -1;
  int mem_bus_width_bits = -1;
  int ecc = -1;                                   // 1 on, 0 off, -1 unknown
  int async_engines = -1;                         // copy engines that can run concurrently
  std::optional<double> sm_clock_under_load_mhz;  // measured during the FFMA kernel
  // PCIe link read from sysfs: under load by the module (links downshift when idle),
  // the maximum by the host side. Raw sysfs text, e.g. "32.0 GT/s PCIe" and "16".
  std::string pcie_speed_under_load, pcie_width_under_load;
  std::string pcie_speed_max, pcie_width_max;
  int numa_node = -1;         // NUMA node the GPU hangs off, -1 unknown
  std::string published_gpu;  // published-table entry the GPU matched, "" none
  std::string error;          // the GPU could not be benchmarked at all
  std::vector<Measurement> results;
  std::vector<RidgePoint> ridge_points;

  const Measurement* find(std::string_view key) const;
  Measurement* find(std::string_view key);
  // Value of an ok measurement, else nullopt.
  std::optional<double> ok_value(std::string_view key) const;
};

// Facts about the host that explain results (bench/host_facts.h fills them).
struct HostInfo {
  std::string hostname;
  int cpus = -1;  // CPUs this process may run on
  double loadavg_1m = -1;
  bool virtual_machine = false;         // cpuinfo "hypervisor" flag
  std::string cpu_governor;             // cpufreq governor of CPU 0, "" unknown
  bool iommu = false;                   // /sys/class/iommu has entries
  std::vector<int> process_numa_nodes;  // NUMA nodes of the CPUs this process may use
  std::vector<std::string> env;         // settings that change results, "NAME=value"
};

// GPU memory other processes hold, from the free memory at the start minus what a CUDA
// context of `chokepoint bench`'s own takes; 0 when unknown.
double foreign_gpu_memory_gib(const GpuProfile& g);

// "32.0 GT/s PCIe" -> 5, "16.0 GT/s" -> 4, "8 GT/s" -> 3 ...; -1 when unknown (sysfs
// current_link_speed / max_link_speed, and NVML's readings as bench keeps them).
int pcie_gen_from_speed(std::string_view sysfs_speed);
// "16" -> 16, "x16" -> 16; -1 when unknown.
int pcie_width_from_text(std::string_view sysfs_width);

struct Profile {
  std::string schema = kProfileSchema;
  std::string tool_version;
  std::string created_utc;    // ISO 8601
  std::string mode;           // "full" | "quick" | "selftest"
  int cuda_driver = -1;       // cudaDriverGetVersion, e.g. 13000
  int cuda_runtime = -1;      // the module's (static) runtime
  int cublaslt = -1;          // cublasLtGetVersion, -1 when cuBLASLt was not found
  std::string cublaslt_note;  // why cuBLASLt is missing
  double seconds = 0;         // whole run
  std::string error;          // the run could not start (no GPU, no driver)
  HostInfo host;
  std::vector<GpuProfile> gpus;
};

// Reads a profile (the module's raw output or a saved/judged one). Unknown keys are
// ignored so older readers accept newer profiles of the same schema major.
Result<Profile> parse_profile(std::string_view json);

// Serializes everything, judgement included; stable key order, nulls never zeros.
std::string profile_to_json(const Profile& p);

}  // namespace chokepoint::machine
