// autocast-bf16 and tf32: matrix kernels on faster units, memory-bound kernels on half
// the bytes (autocast only).
//
// Replay: a GEMM/conv/attention kernel that ran in FP32 on the SIMT units (or TF32) is
// rescaled by the ratio of this GPU's ceilings for the two precisions, but never below
// the time to move its operands at the new element size (recorded shapes) nor below a
// kernel's floor. Under autocast, elementwise and batch-norm kernels outside the optimizer
// move half the bytes (floor: a small kernel's latency does not halve); ops autocast keeps
// in FP32 (layer_norm, softmax, losses) and the optimizer (FP32 master weights) are
// unchanged; each FP32 weight of a forward GEMM is cast to bf16 once per step and its bf16
// gradient back, 12 bytes per weight element, plus one more kernel launch each.
#include <fmt/format.h>

#include "analyses/op_shapes.h"
#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace {

bool matrix(KernelClass k) {
  return k == KernelClass::kGemm || k == KernelClass::kConv || k == KernelClass::kAttention;
}

// What a large GEMM reaches on the units a matrix kernel ran on.
std::optional<double> rate_of(const machine::Ceilings& c, const NodeInfo& n) {
  if (n.precision == Precision::kTf32) return c.tf32_gemm_tflops;
  if (n.precision == Precision::kFp32 && n.tensor_cores == TensorCores::kNo) return c.fp32_gemm_tflops;
  return std::nullopt;
}

// Names of kernels of ops that autocast runs in FP32 whatever their inputs.
bool fp32_under_autocast(std::string_view name) {
  for (std::string_view p : {"layer_norm", "LayerNorm", "softmax", "nll_loss", "cross_entropy", "log_softmax", "mse",
                             "norm_kernel", "reduce_kernel"}) {
    if (name.find(p) != std::string_view::npos) return true;
  }
  return false;
}

struct Rescaled {
  Plan plan;
  int64_t matrix = 0, halved = 0, casts = 0;
  TimeNs matrix_before = 0, matrix_after = 0, memory_before = 0, memory_after = 0, cast_time = 0;
};

// The weight cast of a forward GEMM node k (launched from the step's main thread) that
// autocast adds: a kernel reading the FP32 weight and writing it in BF16, and its launch.
void add_weight_cast(const Context& c, size_t k, TimeNs launch_cost, Rescaled& r) {
  using namespace remedy;
  const auto& g = c.g;
  const NodeInfo& n = c.nodes[k];
  if (n.kclass != KernelClass::kGemm || g.gpu[k].launch < 0) return;
  const int32_t op = c.ix.op_row[g.gpu[k].row];
  const auto sh = gemm_shape(c.tl, op);
  const std::string_view op_name = op >= 0 ? c.tl.strings.view(c.tl.cpu_ranges.name[op]) : "";
  const bool forward = op_name == "aten::addmm" || op_name == "aten::linear" || op_name == "aten::matmul";
  if (!sh || !forward || n.precision == Precision::kBf16) return;
  const TimeNs cast = std::max(kKernelFloorNs, hbm_time(c, 12.0 * sh->weight_elements()));
  r.plan.node_dur[k] += cast;
  r.plan.gap[g.gpu[k].launch] += launch_cost;
  r.cast_time += cast;
  ++r.casts;
}

// Matrix node k in the target precision (rate `target` TFLOP/s, `target_bytes` per element).
void rescale_matrix(const Context& c, size_t k, std::optional<double> target, double target_bytes, bool autocast,
                    TimeNs launch_cost, Rescaled& r) {
  using namespace remedy;
  const NodeInfo& n = c.nodes[k];
  const TimeNs t = c.g.gpu[k].dur;
  if (!autocast && n.precision == Precision::kTf32) return;  // already on TF32
  const std::optional<double> from = rate_of(c.ceilings, n);
  if (!from || !target || *target <= 0) return;
  // With recorded shapes: its FLOPs at what a large GEMM reaches in the new precision
  // (the FP32 kernel may have run above or below the big-GEMM figure); without: its
  // time scaled by the ratio of those rates. Never faster than moving its operands.
  TimeNs after = n.flops > 0 ? ns(n.flops / (*target * 1e3)) : ns(static_cast<double>(t) * *from / *target);
  const double eb = element_bytes(n.precision == Precision::kTf32 ? Precision::kFp32 : n.precision);
  if (n.bytes > 0 && eb > 0) after = std::max(after, hbm_time(c, n.bytes * target_bytes / eb));
  after = std::min(t, std::max(after, kKernelFloorNs));
  r.plan.node_dur[k] = after;
  ++r.matrix;
  r.matrix_before += t;
  r.matrix_after += after;
  if (autocast) add_weight_cast(c, k, launch_cost, r);
}

// Whether autocast runs non-matrix node k in 16 bits: an FP32 elementwise or
// normalization kernel outside the optimizer, of an op autocast does not keep in FP32.
bool halved_by_autocast(const Context& c, size_t k) {
  const NodeInfo& n = c.nodes[k];
  const std::string_view name = c.tl.strings.view(c.tl.gpu_ops.name[c.g.gpu[k].row]);
  return !n.in_optimizer && n.precision != Precision::kBf16 && n.precision != Precision::kFp16 &&
         (n.kclass == KernelClass::kElementwise ||
          (n.kclass == KernelClass::kNormalization && !fp32_under_autocast(name))) &&
         !fp32_under_autocast(name);
}

Rescaled rescale(const Context& c, std::optional<double> target, double target_bytes, bool autocast) {
  using namespace remedy;
  Rescaled r{c.plain};
  const TimeNs launch_cost = autocast ? median_launch_cost(c) : 0;
  for (size_t k = 0; k < c.g.gpu.size(); ++k) {
    const NodeInfo& n = c.nodes[k];
    if (!n.kernel) continue;
    if (matrix(n.kclass)) {
      rescale_matrix(c, k, target, target_bytes, autocast, launch_cost, r);
    } else if (autocast && halved_by_autocast(c, k)) {
      const TimeNs t = c.g.gpu[k].dur;
      const TimeNs after = std::max(std::min(t, kLatencyBoundNs), t / 2);
      r.plan.node_dur[k] = after;
      ++r.halved;
      r.memory_before += t;
      r.memory_after += after;
    }
  }
  return r;
}

}  // namespace

std::optional<Estimate> estimate_autocast_bf16(const Context& c) {
  if (!c.ceilings.has_tensor_cores) return std::nullopt;
  Rescaled r = rescale(c, c.ceilings.bf16_gemm_tflops, 2.0, true);
  if (r.matrix == 0) return std::nullopt;
  std::string change = fmt::format(
      "{} FP32/TF32 matrix kernels per step take {} instead of {}; {} memory-bound kernels {} instead of {}",
      remedy::per_step_count(c, r.matrix), remedy::per_step_ms(c, r.matrix_after),
      remedy::per_step_ms(c, r.matrix_before), remedy::per_step_count(c, r.halved),
      remedy::per_step_ms(c, r.memory_after), remedy::per_step_ms(c, r.memory_before));
  if (r.casts > 0) {
    change += fmt::format("; {} weight casts per step add {}", remedy::per_step_count(c, r.casts),
                          remedy::per_step_ms(c, r.cast_time));
  }
  return finish(c, Remedy::kAutocastBf16, r.plan, change,
                {fmt::format("Matrix kernels do their FLOPs at the rate a large bf16 GEMM reaches on this GPU ({:.0f} "
                             "TFLOP/s, {}), or, without recorded shapes, their time scaled by the FP32/TF32-to-bf16 "
                             "ratio of those rates; never faster than moving their operands in bf16.",
                             c.ceilings.bf16_gemm_tflops.value_or(0), c.ceilings.source),
                 "Elementwise and batch-norm kernels move half the bytes; layer norm, softmax, losses and the "
                 "optimizer stay in FP32.",
                 "Weights stay FP32 (autocast casts each once per step), so memory use does not drop."});
}

namespace {

// The matrix kernels' time of known precision: all of it, in 16 bits or narrower, on TF32.
struct MatrixTime {
  TimeNs known = 0, narrow = 0, tf32 = 0;
};

MatrixTime matrix_time(const Context& c) {
  MatrixTime m;
  for (size_t k = 0; k < c.g.gpu.size(); ++k) {
    const NodeInfo& n = c.nodes[k];
    if (!n.kernel || !matrix(n.kclass) || n.precision == Precision::kUnknown) continue;
    const TimeNs t = c.g.gpu[k].dur;
    m.known += t;
    if (n.precision == Precision::kBf16 || n.precision == Precision::kFp16 || n.precision == Precision::kFp8 ||
        n.precision == Precision::kInt8) {
      m.narrow += t;
    }
    if (n.precision == Precision::kTf32) m.tf32 += t;
  }
  return m;
}

// In place: the change holds for most of the matrix work (a few FP32 kernels stay under
// autocast: losses, the optimizer's, ops it keeps in FP32).
constexpr double kInPlaceShare = 0.8;

}  // namespace

bool runs_mixed_precision(const Context& c) {
  const MatrixTime m = matrix_time(c);
  return m.known > 0 && static_cast<double>(m.narrow) >= kInPlaceShare * static_cast<double>(m.known);
}

bool runs_tf32(const Context& c) {
  const MatrixTime m = matrix_time(c);
  const TimeNs fp32 = m.known - m.narrow;
  return fp32 > 0 && static_cast<double>(m.tf32) >= kInPlaceShare * static_cast<double>(fp32);
}

std::optional<Estimate> estimate_tf32(const Context& c) {
  if (!c.ceilings.has_tf32) return std::nullopt;
  Rescaled r = rescale(c, c.ceilings.tf32_gemm_tflops, 4.0, false);
  // TF32 changes FP32 SIMT kernels only; ones already on TF32 are not counted.
  if (r.matrix == 0 || r.matrix_after >= r.matrix_before) return std::nullopt;
  return finish(c, Remedy::kTf32, r.plan,
                fmt::format("{} FP32 matrix kernels per step take {} on TF32 tensor cores instead of {}",
                            remedy::per_step_count(c, r.matrix), remedy::per_step_ms(c, r.matrix_after),
                            remedy::per_step_ms(c, r.matrix_before)),
                {fmt::format("Matrix kernels do their FLOPs at the rate a large TF32 GEMM reaches on this GPU ({:.0f} "
                             "TFLOP/s, {}), or scale by the FP32-to-TF32 ratio of those rates without recorded shapes.",
                             c.ceilings.tf32_gemm_tflops.value_or(0), c.ceilings.source),
                 "TF32 keeps FP32's range with a 10-bit mantissa: fine for training, check a tolerance-sensitive "
                 "evaluation."});
}

}  // namespace chokepoint::analyses::whatif
