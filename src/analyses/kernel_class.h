// Kernel classes and precision. The class comes from the kernel name first, then from the
// launching ATen op when the name says nothing (custom or Triton kernels). Precision and
// tensor-core use come from the launching op's input types first and from the kernel
// name second (docs/FORMATS.md "Kineto trace": "xmma" names can be FP32 SIMT kernels).
#pragma once

#include <cstdint>
#include <string_view>

namespace chokepoint::analyses {

enum class KernelClass : uint8_t {
  kGemm,
  kConv,
  kAttention,
  kElementwise,
  kReduction,
  kNormalization,
  kCopy,
  kCommunication,
  kOther,
};
inline constexpr int kNumKernelClasses = 9;
const char* kernel_class_name(KernelClass c);

enum class Precision : uint8_t { kUnknown, kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8 };
const char* precision_name(Precision p);  // "" for unknown

enum class TensorCores : uint8_t { kUnknown, kYes, kNo };

// Class from the kernel name alone (kOther when the name says nothing).
KernelClass classify_kernel_name(std::string_view kernel_name);
// Class from the name of the ATen op that launched it (kOther when unknown).
KernelClass classify_op_name(std::string_view op_name);
// Precision of a tensor type string of Kineto's "Input type" ("float", "c10::BFloat16").
Precision precision_of_type(std::string_view type);
// Tensor-core use evident from a GEMM/conv/attention kernel name.
TensorCores tensor_cores_from_name(std::string_view kernel_name);
// Precision evident from a kernel name ("bf16", "f16", "tf32", "sgemm" ...).
Precision precision_from_name(std::string_view kernel_name);

}  // namespace chokepoint::analyses
