// Machine ceilings: the denominators of every "achieved vs possible" figure (bandwidth
// against the link, FLOP/s against peak). From a saved `chokepoint bench` profile when
// one exists (issue: bench), else from the published figures of the GPU by name
// (REFERENCE.md section 9), else unknown. A missing ceiling is nullopt, never 0.
#pragma once

#include <optional>
#include <string>

#include "timeline/model.h"

namespace chokepoint::machine {

struct Ceilings {
  std::string gpu;                       // matched GPU, e.g. "H200 SXM"
  std::string source;                    // "published:H200 SXM", "unknown"
  std::optional<double> hbm_gbps;        // device memory bandwidth, GB/s (1e9 B/s)
  std::optional<double> pcie_gbps;       // achievable host<->device per direction, pinned, GB/s
  std::optional<double> pcie_theoretical_gbps;
  std::optional<double> pageable_gbps;   // typical pageable host<->device, GB/s
  std::optional<double> fp32_tflops;     // non-tensor FP32
  std::optional<double> tf32_tflops;     // dense tensor-core TF32
  std::optional<double> bf16_tflops;     // dense tensor-core BF16/FP16
  std::optional<double> fp8_tflops;      // dense tensor-core FP8
  bool has_tensor_cores = false;         // any tensor cores (cc >= 7.0)
  bool has_tf32 = false;                 // TF32 tensor cores (cc >= 8.0)
  int num_sms = -1;
};

// Ceilings for a device described in a trace. Matches the name against the published
// table; fills num_sms and the tensor-core flags from the compute capability.
Ceilings ceilings_for(const timeline::Device& d);

}  // namespace chokepoint::machine
