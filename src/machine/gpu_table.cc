#include "machine/gpu_table.h"

namespace chokepoint::machine {
namespace {

// One row per model and form factor; docs/FORMATS.md "Published ceilings" names the
// datasheet of each and how derived figures (FP64 of graphics parts, per-GPU shares of
// a system's figures) were obtained. Dense tensor figures are the datasheets' sparse
// ones halved where only those are given. GeForce parts give BF16/FP16, FP8 with FP32
// accumulate (what PyTorch's GEMMs use), half their FP16-accumulate rate.
// The first row of a model is the variant assumed when nothing tells them apart.
constexpr GpuModel kModels[] = {
    // label, model, forms, sms, boost, mem GB, TB/s, L2 MB,
    //   fp64, fp32, tf32, bf16, fp8, fp4, int8, pcie, nvlink, mig, source
    {"V100 SXM2", "v100", "sxm2 sxm", 80, 1530, 32, 0.9, 6, 7.8, 15.7, 0, 125, 0, 0, 0, 3, 2, 0,
     "NVIDIA V100 Tensor Core GPU datasheet"},
    {"V100 PCIe", "v100", "pcie", 80, 1380, 32, 0.9, 6, 7, 14, 0, 112, 0, 0, 0, 3, 0, 0,
     "NVIDIA V100 Tensor Core GPU datasheet"},
    {"T4", "t4", "=", 40, 1590, 16, 0.32, 4, 0.25, 8.1, 0, 65, 0, 0, 130, 3, 0, 0, "NVIDIA T4 datasheet"},
    {"A100 SXM 80GB", "a100", "sxm sxm4", 108, 1410, 80, 2.039, 40, 9.7, 19.5, 156, 312, 0, 0, 624, 4, 3, 7,
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A100 SXM 40GB", "a100", "sxm sxm4", 108, 1410, 40, 1.555, 40, 9.7, 19.5, 156, 312, 0, 0, 624, 4, 3, 7,
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A100 PCIe 80GB", "a100", "pcie", 108, 1410, 80, 1.935, 40, 9.7, 19.5, 156, 312, 0, 0, 624, 4, 3, 7,
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A100 PCIe 40GB", "a100", "pcie", 108, 1410, 40, 1.555, 40, 9.7, 19.5, 156, 312, 0, 0, 624, 4, 3, 7,
     "NVIDIA A100 Tensor Core GPU datasheet"},
    {"A10", "a10", "=", 72, 1695, 24, 0.6, 6, 0.49, 31.2, 62.5, 125, 0, 0, 250, 4, 0, 0,
     "NVIDIA A10 Tensor Core GPU datasheet"},
    {"A10G", "a10g", "=", 80, 1710, 24, 0.6, 6, 0, 31.52, 35, 70, 0, 0, 140, 4, 0, 0,
     "AWS G5 (A10G) figures; no NVIDIA datasheet"},
    {"A30", "a30", "=", 56, 1440, 24, 0.933, 24, 5.2, 10.3, 82, 165, 0, 0, 330, 4, 3, 4,
     "NVIDIA A30 Tensor Core GPU datasheet"},
    {"A40", "a40", "=", 84, 1740, 48, 0.696, 6, 0.58, 37.4, 74.8, 149.7, 0, 0, 299.3, 4, 3, 0, "NVIDIA A40 datasheet"},
    {"L4", "l4", "=", 58, 2040, 24, 0.3, 48, 0.47, 30.3, 60, 121, 242, 0, 242, 4, 0, 0, "NVIDIA L4 datasheet"},
    {"L40", "l40", "=", 142, 2490, 48, 0.864, 96, 1.41, 90.5, 90.5, 181, 362, 0, 362, 4, 0, 0, "NVIDIA L40 datasheet"},
    {"L40S", "l40s", "=", 142, 2520, 48, 0.864, 96, 1.43, 91.6, 183, 362, 733, 0, 733, 4, 0, 0,
     "NVIDIA L40S datasheet"},
    {"H100 SXM", "h100", "sxm sxm5 hbm3", 132, 1980, 80, 3.35, 50, 34, 67, 495, 989, 1979, 0, 1979, 5, 4, 7,
     "NVIDIA H100 Tensor Core GPU datasheet"},
    {"H100 PCIe", "h100", "pcie", 114, 1755, 80, 2.0, 50, 26, 51, 378, 756, 1513, 0, 1513, 5, 4, 7,
     "NVIDIA H100 Tensor Core GPU datasheet"},
    {"H100 NVL", "h100", "nvl", 132, 1785, 94, 3.9, 50, 30, 60, 418, 835, 1671, 0, 1671, 5, 4, 7,
     "NVIDIA H100 Tensor Core GPU datasheet"},
    {"H200 SXM", "h200", "sxm =", 132, 1980, 141, 4.8, 50, 34, 67, 495, 989, 1979, 0, 1979, 5, 4, 7,
     "NVIDIA H200 Tensor Core GPU datasheet"},
    {"H200 NVL", "h200", "nvl", 132, 1785, 141, 4.8, 50, 30, 60, 418, 835, 1671, 0, 1671, 5, 4, 7,
     "NVIDIA H200 Tensor Core GPU datasheet"},
    {"H20", "h20", "=", 78, 0, 96, 4.0, 60, 1, 44, 74, 148, 296, 0, 296, 5, 4, 7, "NVIDIA H20 product brief"},
    {"H800 SXM", "h800", "sxm hbm3 =", 132, 1980, 80, 3.35, 50, 1, 67, 495, 989, 1979, 0, 1979, 5, 4, 7,
     "NVIDIA H800 Tensor Core GPU datasheet"},
    {"H800 PCIe", "h800", "pcie", 114, 1755, 80, 2.0, 50, 0.8, 51, 378, 756, 1513, 0, 1513, 5, 4, 7,
     "NVIDIA H800 Tensor Core GPU datasheet"},
    {"B200", "b200", "=", 148, 0, 180, 8.0, 0, 37, 75, 1125, 2250, 4500, 9000, 4500, 5, 5, 7,
     "NVIDIA HGX B200 datasheet (8-GPU figures / 8)"},
    {"GB200", "gb200", "=", 148, 0, 186, 8.0, 0, 45, 90, 1250, 2500, 5000, 10000, 5000, 0, 5, 7,
     "NVIDIA GB200 NVL72 datasheet (72-GPU figures / 72)"},
    {"RTX 6000 Ada", "6000 ada", "=", 142, 2505, 48, 0.96, 96, 1.42, 91.1, 182.1, 364.2, 728.5, 0, 728.5, 4, 0, 0,
     "NVIDIA RTX 6000 Ada Generation datasheet; Ada Lovelace architecture whitepaper"},
    {"RTX A6000", "a6000", "=", 84, 1800, 48, 0.768, 6, 0.6, 38.7, 77.4, 154.8, 0, 0, 309.7, 4, 3, 0,
     "NVIDIA RTX A6000 datasheet; Ampere GA102 whitepaper"},
    {"RTX 3090", "3090", "=", 82, 1695, 24, 0.936, 6, 0.56, 35.6, 35.6, 71, 0, 0, 284, 4, 3, 0,
     "NVIDIA Ampere GA102 GPU architecture whitepaper"},
    {"RTX 4090", "4090", "=", 128, 2520, 24, 1.008, 72, 1.29, 82.6, 82.6, 165.2, 330.3, 0, 660.6, 4, 0, 0,
     "NVIDIA Ada Lovelace GPU architecture whitepaper"},
    {"RTX 5090", "5090", "=", 170, 2407, 32, 1.792, 96, 1.64, 104.8, 104.8, 209.5, 419, 1676, 838, 5, 0, 0,
     "NVIDIA RTX Blackwell GPU architecture whitepaper"},
    {"Jetson AGX Orin 64GB", "orin", "=", 16, 1300, 64, 0.2048, 4, 0, 5.3, 21.3, 42.5, 0, 0, 85, 0, 0, 0,
     "NVIDIA Jetson AGX Orin series technical brief"},
};

}  // namespace

std::span<const GpuModel> gpu_models() { return kModels; }

}  // namespace chokepoint::machine
