#include "analyses/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>

namespace chokepoint::analyses {
namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

bool any_of(const std::string& s, std::initializer_list<std::string_view> pats) {
  for (auto p : pats) {
    if (s.find(p) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kConv: return "conv";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kNormalization: return "normalization";
    case KernelClass::kCopy: return "copy";
    case KernelClass::kCommunication: return "communication";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kUnknown: return "";
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
    case Precision::kInt8: return "int8";
  }
  return "";
}

KernelClass classify_kernel_name(std::string_view name) {
  const std::string n = lower(name);
  if (n.rfind("nccl", 0) == 0 ||
      any_of(n, {"ncclkernel", "nccldevkernel", "all_reduce", "allreduce", "all_gather", "reduce_scatter"})) {
    return KernelClass::kCommunication;
  }
  if (any_of(n, {"flash", "fmha", "attention", "sdpa", "mha_fwd", "mha_bwd"})) {
    return KernelClass::kAttention;
  }
  // Layout transforms around cuDNN convolutions move bytes; they are not convolutions.
  if (any_of(n, {"nchwtonhwc", "nhwctonchw"})) return KernelClass::kElementwise;
  if (any_of(n, {"conv", "fprop", "dgrad", "wgrad", "winograd"})) return KernelClass::kConv;
  if (any_of(n, {"splitkreduce"})) return KernelClass::kReduction;
  if (any_of(n, {"gemm", "gemv", "nvjet", "cutlass", "cublas", "matmul", "xmma", "wgmma", "hmma", "_mma"})) {
    return KernelClass::kGemm;
  }
  if (any_of(n, {"layer_norm", "layernorm", "batch_norm", "batchnorm", "group_norm", "groupnorm", "rms_norm", "rmsnorm",
                 "instance_norm", "gammabeta", "welford", "bn_fw", "bn_bw", "norm_kernel"})) {
    return KernelClass::kNormalization;
  }
  if (any_of(n, {"reduce", "softmax", "nll_loss", "cross_entropy", "cumsum", "scan", "argmax", "argmin", "topk",
                 "triton_red", "triton_per"})) {
    return KernelClass::kReduction;
  }
  if (any_of(n, {"elementwise", "copy_kernel", "fill_kernel", "multi_tensor_apply", "triton_poi", "distribution",
                 "index_kernel", "cat_array", "catarray", "unrolled", "vectorized"})) {
    return KernelClass::kElementwise;
  }
  if (n.rfind("memcpy", 0) == 0 || n.rfind("memset", 0) == 0) return KernelClass::kCopy;
  return KernelClass::kOther;
}

KernelClass classify_op_name(std::string_view op) {
  const std::string n = lower(op);
  if (any_of(n, {"c10d::", "nccl", "all_reduce", "allreduce", "all_gather", "broadcast_", "reduce_scatter"})) {
    return KernelClass::kCommunication;
  }
  if (any_of(n, {"attention", "sdpa", "flash"})) return KernelClass::kAttention;
  if (any_of(n, {"conv"})) return KernelClass::kConv;
  for (std::string_view g : {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
                             "aten::_scaled_mm", "aten::addmv", "aten::mv", "aten::einsum"}) {
    if (n == g) return KernelClass::kGemm;
  }
  if (any_of(n, {"norm"})) return KernelClass::kNormalization;
  if (any_of(n, {"sum", "mean", "softmax", "max", "min", "loss", "amax"})) {
    return KernelClass::kReduction;
  }
  if (any_of(n, {"copy_", "aten::to", "aten::add", "aten::mul", "aten::sub", "aten::div", "aten::relu", "aten::gelu",
                 "aten::silu", "aten::sigmoid", "aten::tanh", "aten::fill_", "aten::zero_", "aten::where",
                 "aten::clamp", "aten::pow", "aten::exp", "aten::log"})) {
    return KernelClass::kElementwise;
  }
  return KernelClass::kOther;
}

Precision precision_of_type(std::string_view t) {
  if (t == "float") return Precision::kFp32;
  if (t == "double") return Precision::kFp64;
  if (t == "c10::BFloat16") return Precision::kBf16;
  if (t == "c10::Half") return Precision::kFp16;
  if (t.find("Float8") != std::string_view::npos) return Precision::kFp8;
  if (t == "signed char" || t == "char" || t == "c10::qint8") return Precision::kInt8;
  return Precision::kUnknown;
}

TensorCores tensor_cores_from_name(std::string_view name) {
  const std::string n = lower(name);
  // FP32 SIMT kernels, even when the name says "xmma" (sm80_xmma_gemm_f32f32_..._ffma).
  if (any_of(n, {"_ffma", "simt", "gemmsn", "gemv", "implicit_convolve_sgemm", "dgemm"})) {
    return TensorCores::kNo;
  }
  if (any_of(n, {"nvjet", "wgmma", "hmma", "gmma", "tensorop", "_tf32", "tf32_", "1688", "16816", "i8816", "imma",
                 "bf16", "f16", "fp16", "e4m3", "e5m2"})) {
    return TensorCores::kYes;
  }
  if (any_of(n, {"sgemm"})) return TensorCores::kNo;
  return TensorCores::kUnknown;
}

Precision precision_from_name(std::string_view name) {
  const std::string n = lower(name);
  if (any_of(n, {"e4m3", "e5m2", "fp8"})) return Precision::kFp8;
  if (any_of(n, {"bf16"})) return Precision::kBf16;
  if (any_of(n, {"tf32"})) return Precision::kTf32;
  if (any_of(n, {"f16", "fp16", "hgemm", "h1688", "h16816"})) return Precision::kFp16;
  if (any_of(n, {"i8816", "imma", "int8"})) return Precision::kInt8;
  if (any_of(n, {"dgemm", "f64"})) return Precision::kFp64;
  if (any_of(n, {"sgemm", "f32f32", "_ffma", "simt"})) return Precision::kFp32;
  return Precision::kUnknown;
}

}  // namespace chokepoint::analyses
