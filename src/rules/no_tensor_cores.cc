// no-tensor-cores: FP32 GEMM/conv on a GPU with tensor cores (TF32 / AMP would use them).
#include <fmt/format.h>

#include "rules/checks/checks.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// FP32 SIMT matrix work worth switching (5% of the step: at the ~7x TF32/FP32 ceiling
// ratio of Ampere/Hopper that is already a >1.04x step gain).
constexpr double kMinSharePct = 5.0;
}  // namespace

std::optional<Finding> no_tensor_cores(const TraceEvidence& c) {
  const auto& k = c.a.kernels;
  const auto& ceil = c.a.ceilings;
  if (!ceil.has_tensor_cores) return std::nullopt;
  const TimeNs slow = k.matrix_fp32_no_tc_ns;
  const double share = c.a.pct(slow);
  if (share < kMinSharePct) return std::nullopt;
  const auto& t = c.a.total();
  // Rescale the affected kernels by the ratio of ceilings (FP32 SIMT -> TF32 or BF16 tensor).
  const std::optional<double> target = ceil.has_tf32 ? ceil.tf32_tflops : ceil.bf16_tflops;
  std::optional<double> speedup;
  if (ceil.fp32_tflops && target && *target > 0) {
    const double ratio = *ceil.fp32_tflops / *target;
    const TimeNs saved = static_cast<TimeNs>(static_cast<double>(slow) * (1.0 - ratio));
    speedup = analyses::projected_speedup(t.duration, saved, t.host_critical);
  }
  // The slowest such kernel, for the evidence.
  std::string top;
  for (const auto& ks : k.kernels) {
    if (ks.tensor_cores == analyses::TensorCores::kNo && ks.precision == analyses::Precision::kFp32) {
      top = std::string(c.tl.strings.view(ks.name));
      break;
    }
  }
  Finding f = new_finding(share, speedup);
  f.remedies = {"autocast-bf16", "tf32"};
  f.title = fmt::format("{:.0f}% of the step runs FP32 matrix kernels without tensor cores", share);
  const char* tc = ceil.has_tf32 ? "TF32" : "FP16";
  std::string peaks;
  if (ceil.fp32_tflops && target) {
    peaks = fmt::format(", which peak at {:.0f} TFLOP/s on this GPU against {:.0f} TFLOP/s for {} on tensor cores.",
                        *ceil.fp32_tflops, *target, tc);
  } else {  // say which figure is missing and how to supply it, not "?"
    peaks = ". The gain is not estimated: " +
            machine::missing_ceiling(ceil,
                                     !ceil.fp32_tflops ? std::string("FP32 TFLOP/s") : std::string(tc) + " TFLOP/s") +
            ".";
  }
  f.detail = fmt::format(
      "{:.1f} ms per step of GEMM/conv kernels take FP32 inputs and run on the FP32 SIMT units "
      "(e.g. {}){}",
      c.a.ms_per_step(slow), top.substr(0, 80), peaks);
  f.evidence = {
      evidence("fp32_simt_matrix_pct", share, "%", kMinSharePct),
      evidence("fp32_simt_matrix_ms_per_step", c.a.ms_per_step(slow), "ms"),
      evidence("tensor_core_matrix_pct_of_matrix",
               k.matrix_ns > 0 ? 100.0 * static_cast<double>(k.matrix_tc_ns) / static_cast<double>(k.matrix_ns) : 0,
               "%")};
  if (ceil.fp32_tflops) f.evidence.push_back(evidence("fp32_peak_tflops", *ceil.fp32_tflops, "TFLOP/s"));
  if (target) f.evidence.push_back(evidence("tensor_core_peak_tflops", *target, "TFLOP/s"));
  f.recommendation = ceil.has_tf32
                         ? "Enable TF32 tensor cores: torch.backends.cuda.matmul.fp32_precision = \"tf32\" on "
                           "PyTorch 2.9 and later (the allow_tf32 flags warn there), "
                           "torch.backends.cuda.matmul.allow_tf32 = True before 2.9; or better, mixed precision: "
                           "with torch.autocast(\"cuda\", dtype=torch.bfloat16). Keep GEMM dimensions multiples of "
                           "8."
                         : "Use mixed precision: with torch.autocast(\"cuda\", dtype=torch.float16) and a "
                           "torch.amp.GradScaler; keep GEMM dimensions multiples of 8.";
  return f;
}

}  // namespace chokepoint::rules

// From live samples: the SMs are busy but the tensor cores idle (GPM), and DRAM is not
// what keeps the SMs busy: arithmetic on the FP32 units, the signature of FP32 matrix
// work without TF32 or mixed precision. The tensor pipes are judged against the SMs'
// activity, not alone: the elementwise and softmax kernels between fp32 GEMMs keep a few
// percent on them. Measured: fp32 training on the H200, SM 78-92% with tensor 0-1% (under
// 1.3% of SM), against 93% tensor in bf16; an fp32 transformer layer with TF32 off on the
// H100 (issue 42), SM 94% with tensor 3% (3.2% of SM), which an absolute 3% bar missed while
// bf16 autocast measured 6.4x on it; a ResNet-50 in fp32 whose convolutions cuDNN already
// runs in TF32, ~9% tensor at ~80% SM (11%): no finding.
namespace chokepoint::rules {
namespace {
constexpr double kBusySmPct = 50.0;
constexpr double kIdleTensorShareOfSm = 0.05;
constexpr double kDramHeavyPct = 60.0;
}  // namespace

std::optional<Finding> no_tensor_cores_samples(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const auto* g : c.la.judged_gpus()) {
    if (!g->sm_active || !g->tensor_active) continue;
    const double sm = g->sm_active->mean, tensor = g->tensor_active->mean;
    const double dram = g->dram_active ? g->dram_active->mean : 0;
    const double tensor_bar = kIdleTensorShareOfSm * sm;
    if (sm < kBusySmPct || tensor > tensor_bar || dram >= kDramHeavyPct) continue;
    Finding f = new_finding(sm, std::nullopt);
    f.remedies = {"autocast-bf16", "tf32"};
    f.title = fmt::format("GPU {}: SMs {:.0f}% active but tensor cores {:.1f}%: arithmetic runs on the FP32 units",
                          g->index, sm, tensor);
    f.detail = fmt::format(
        "Over the {:.1f} s active window GPM shows the SMs busy {:.0f}% of the time, the tensor pipes {:.1f}% and "
        "DRAM {:.0f}%: compute that is not matrix work on tensor cores. FP32 matmuls and convolutions without "
        "TF32 look like this. A trace (`chokepoint run --trace`) gives the kernels and the gain.",
        g->active_s(), sm, tensor, dram);
    f.evidence = {evidence("sm_active_pct", sm, "%", kBusySmPct),
                  evidence_at_most("tensor_active_pct", tensor, "%", tensor_bar),
                  evidence_at_most("dram_active_pct", dram, "%", kDramHeavyPct)};
    f.recommendation =
        "torch.set_float32_matmul_precision(\"high\") (TF32), or better torch.autocast(\"cuda\", "
        "dtype=torch.bfloat16) around the forward pass and loss.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain no-tensor-cores` prints.
extern const Rule no_tensor_cores_rule = {
    .id = "no-tensor-cores",
    .category = Category::kCompute,
    .trace = no_tensor_cores,
    .samples = no_tensor_cores_samples,
    .bench = checks::bench_tf32_off,
    .meaning =
        "FP32 matrix work (GEMM, convolution) on a GPU with tensor cores: TF32 or bf16/fp16 mixed "
        "precision would run it several times faster.",
    .detection =
        "From a trace: FP32 SIMT matrix kernels, 5% of the step or more. From live samples (GPM): "
        "SMs busy at least half the time, tensor pipes active under a twentieth of the SMs' activity, DRAM not "
        "the limit.",
    .action =
        "TF32: torch.backends.cuda.matmul.fp32_precision = \"tf32\" (PyTorch 2.9 and later; before, "
        "torch.backends.cuda.matmul.allow_tf32 = True), or torch.autocast(\"cuda\", dtype=torch.bfloat16). "
        "Remedies tf32, autocast-bf16.",
};

}  // namespace chokepoint::rules
