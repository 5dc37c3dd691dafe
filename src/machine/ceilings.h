// Machine ceilings: the denominators of every "achieved vs possible" figure (bandwidth
// against the link, FLOP/s against peak). From a saved `chokepoint bench` profile when
// one exists (issue: bench), else from the published figures of the GPU by name
// (docs/FORMATS.md "Published ceilings"), else unknown. A missing ceiling is nullopt, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "machine/profile.h"

namespace chokepoint::machine {

// What the ceilings are looked up by: a GPU as a trace, NVML or bench describes it.
// Fields not known stay -1 / "".
struct DeviceSpec {
  std::string name;  // "NVIDIA H200"
  int32_t num_sms = -1;
  int32_t cc_major = -1, cc_minor = -1;
  int64_t memory_bytes = -1;
};

struct Ceilings {
  std::string gpu;                      // matched GPU, e.g. "H200 SXM", "H100 SXM MIG 3g.40gb"
  std::string device;                   // the name the trace or NVML gave, "" unknown
  std::string note;                     // how published figures were scaled (MIG) or assumed
  std::string source;                   // "published:H200 SXM", "profile:<path>", "unknown"
  std::optional<double> hbm_gbps;       // device memory bandwidth, GB/s (1e9 B/s), DRAM
                                        // traffic (read + write) like the datasheet figure
  std::optional<double> d2d_copy_gbps;  // device-to-device copy, bytes counted once (a copy
                                        // moves each byte twice through DRAM): hbm_gbps / 2
  std::optional<double> pcie_gbps;      // achievable host<->device per direction, pinned, GB/s
  std::optional<double> pcie_theoretical_gbps;
  std::optional<double> pageable_gbps;  // typical pageable host<->device, GB/s
  std::optional<double> fp64_tflops;    // non-tensor FP64
  std::optional<double> fp32_tflops;    // non-tensor FP32
  std::optional<double> tf32_tflops;    // dense tensor-core TF32
  std::optional<double> bf16_tflops;    // dense tensor-core BF16/FP16
  std::optional<double> fp8_tflops;     // dense tensor-core FP8
  std::optional<double> fp4_tflops;     // dense tensor-core FP4
  std::optional<double> int8_tops;      // dense tensor-core INT8, TOP/s
  std::optional<double> l2_mb;          // L2 cache, MB (a MIG slice's share)
  std::optional<double> memory_gb;      // device memory, GB, as published (a slice's share)
  int boost_mhz = -1;                   // max boost clock, -1 unknown
  int pcie_gen = -1, nvlink_gen = -1;   // host link and NVLink generation, 0 none, -1 unknown
  // What a large dense GEMM reaches in each precision (what-ifs rescale matrix work by
  // these): measured by `bench` when a profile exists, else the peak times the share
  // bench measured on the H200 (see kGemmEfficiency).
  std::optional<double> fp32_gemm_tflops, tf32_gemm_tflops, bf16_gemm_tflops, fp8_gemm_tflops;
  // The SM clock (MHz) bench's GEMMs ran at (a profile only): a kernel measured at another
  // clock is compared per clock (kernels).
  std::optional<double> tf32_gemm_mhz, bf16_gemm_mhz, fp8_gemm_mhz;
  bool has_tensor_cores = false;  // any tensor cores (cc >= 7.0)
  bool has_tf32 = false;          // TF32 tensor cores (cc >= 8.0)
  int num_sms = -1;
};

// Ceilings for a device described in a trace: the published figures (below), replaced
// by the measured ones of a saved `chokepoint bench` profile for that GPU model when one
// exists (profile_store.h says where; $CHOKEPOINT_PROFILE=none turns that off).
Ceilings ceilings_for(const DeviceSpec& d);

// The published figures only: matches the name against the published table; fills
// num_sms and the tensor-core flags from the compute capability. bench compares its
// measurements with these, never with an earlier profile.
Ceilings published_ceilings_for(const DeviceSpec& d);

// What to tell a user when the ceiling `figure` ("HBM bandwidth") of `c` is missing: for
// which GPU, why (not in the published table, or its datasheet gives none), and how to
// supply it: `chokepoint bench --save` on that machine, or `--ceilings FILE`.
std::string missing_ceiling(const Ceilings& c, std::string_view figure);

// Replaces the ceilings that `profile` measured for GPUs named gpu_name (the median
// over such GPUs): pinned H2D/D2H -> pcie_gbps (the faster direction: a ceiling is what
// the link was seen to reach), pageable -> pageable_gbps, device-to-device memcpy ->
// d2d_copy_gbps and hbm_gbps (twice it: DRAM traffic), FFMA -> fp32_tflops, GEMM peaks
// -> tf32/bf16/fp8 TFLOP/s and int8 TOP/s. A figure the profile lacks (waived, failed)
// keeps the published value. source becomes "profile:<path>" when anything was taken.
Ceilings apply_profile(Ceilings c, const Profile& profile, const std::string& gpu_name, const std::string& path);

}  // namespace chokepoint::machine
