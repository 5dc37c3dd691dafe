// The published figures of NVIDIA GPUs from Volta on, one row per model and form factor
// (docs/FORMATS.md "Published ceilings" gives the datasheet of each row). Dense figures,
// no sparsity; 0 means the datasheet gives none (or the part lacks it).
#pragma once

#include <span>

namespace chokepoint::machine {

struct GpuModel {
  const char* label;  // "H100 PCIe": what reports name the match
  // Lower-case tokens of the CUDA device name, space-separated, that must all be present
  // as whole tokens ("l4" does not match "L40S"): "h100", "6000 ada".
  const char* model;
  // Tokens any one of which names this form factor ("pcie", "sxm sxm5 hbm3"); "=" also
  // matches a name that carries no form-factor token of the model at all (the variant CUDA
  // names plainly: "NVIDIA H200" is the SXM part, the NVL says "NVIDIA H200 NVL").
  const char* forms;
  int sms;             // streaming multiprocessors of the full part
  int boost_mhz;       // max boost clock, 0 not published
  double memory_gb;    // device memory as the datasheet gives it (GB)
  double mem_tbs;      // memory bandwidth, TB/s
  double l2_mb;        // L2 cache, MB (0 not published)
  double fp64;         // non-tensor FP64 TFLOP/s
  double fp32;         // non-tensor FP32 TFLOP/s
  double tf32;         // dense tensor-core TF32 TFLOP/s
  double bf16;         // dense tensor-core BF16 (FP16 when BF16 is absent), FP32 accumulate
  double fp8;          // dense tensor-core FP8
  double fp4;          // dense tensor-core FP4
  double int8;         // dense tensor-core INT8 TOP/s
  int pcie_gen;        // host link generation (x16); 0 none (integrated, or NVLink-C2C)
  int nvlink_gen;      // 0 none
  int mig_slices;      // compute slices of a full MIG part (7; A30: 4), 0 no MIG
  const char* source;  // short name of the datasheet / whitepaper
};

std::span<const GpuModel> gpu_models();

}  // namespace chokepoint::machine
