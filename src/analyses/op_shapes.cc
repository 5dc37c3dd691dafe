#include "analyses/op_shapes.h"

#include <algorithm>

namespace chokepoint::analyses {

namespace {

struct Dims {
  const timeline::OpInputs& oi;
  uint32_t op;
  uint32_t count() const { return oi.num_inputs(op); }
  uint32_t rank(uint32_t j) const { return j < oi.num_inputs(op) ? oi.rank(op, j) : 0; }
  int64_t d(uint32_t j, uint32_t k) const { return oi.dim(op, j, k); }
  std::string text(uint32_t j) const {
    std::string s = "[";
    for (uint32_t k = 0; k < rank(j); ++k) {
      if (k) s += ',';
      s += std::to_string(d(j, k));
    }
    return s + "]";
  }
};

// ATen ops whose output is a reduction of their input (a sum over the batch: [8192, 4096]
// -> [4096]): they read their inputs and write next to nothing. Counted with an output as
// large as the input, fp32_gemm's bias-gradient sums read 118% of the H200's HBM rate.
// aten::max and aten::min reduce with one tensor; with two (torch.max(a, b)) they are
// elementwise, and a trace names both overloads alike.
bool reduces(std::string_view op, int tensors) {
  static constexpr std::string_view kOps[] = {
      "aten::sum", "aten::mean",   "aten::amax",     "aten::amin",          "aten::norm",   "aten::linalg_vector_norm",
      "aten::var", "aten::std",    "aten::var_mean", "aten::std_mean",      "aten::prod",   "aten::any",
      "aten::all", "aten::argmax", "aten::argmin",   "aten::count_nonzero", "aten::nansum", "aten::logsumexp"};
  if (op == "aten::max" || op == "aten::min") return tensors == 1;
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace

double type_bytes(std::string_view t) {
  switch (precision_of_type(t)) {
    case Precision::kFp64: return 8;
    case Precision::kFp32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
    default: return t == "long int" || t == "long" ? 8 : t == "int" ? 4 : t == "bool" ? 1 : 0;
  }
}

double element_bytes(Precision p) {
  switch (p) {
    case Precision::kFp64: return 8;
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
    case Precision::kUnknown: return 0;
  }
  return 0;
}

double op_input_numel(const timeline::Timeline& tl, int32_t op_row, uint32_t j) {
  if (op_row < 0) return 0;
  const uint32_t in = tl.cpu_ranges.inputs[op_row];
  if (in == timeline::CpuRanges::kNoInputs) return 0;
  const auto& oi = tl.op_inputs;
  if (j >= oi.num_inputs(in) || oi.rank(in, j) == 0) return 0;
  double n = 1;
  for (uint32_t k = 0; k < oi.rank(in, j); ++k) n *= static_cast<double>(std::max<int64_t>(0, oi.dim(in, j, k)));
  return n;
}

double op_io_bytes(const timeline::Timeline& tl, int32_t op_row) {
  if (op_row < 0) return 0;
  const uint32_t in = tl.cpu_ranges.inputs[op_row];
  if (in == timeline::CpuRanges::kNoInputs) return 0;
  const auto& oi = tl.op_inputs;
  double sum = 0, largest = 0;
  int tensors = 0;
  for (uint32_t j = 0; j < oi.num_inputs(in); ++j) {
    const double eb = type_bytes(tl.strings.view(oi.input_type(in, j)));
    if (eb == 0) continue;
    const double n = op_input_numel(tl, op_row, j);
    sum += n * eb;
    largest = std::max(largest, n * eb);
    tensors += n > 0 ? 1 : 0;
  }
  return reduces(tl.strings.view(tl.cpu_ranges.name[op_row]), tensors) ? sum : sum + largest;
}

std::optional<GemmShape> gemm_shape(const timeline::Timeline& tl, int32_t op_row) {
  if (op_row < 0) return std::nullopt;
  const uint32_t in = tl.cpu_ranges.inputs[op_row];
  if (in == timeline::CpuRanges::kNoInputs) return std::nullopt;
  const std::string_view name = tl.strings.view(tl.cpu_ranges.name[op_row]);
  Dims x{tl.op_inputs, in};
  uint32_t a = 0, b = 1;  // inputs holding the two matrices
  if (name == "aten::addmm" || name == "aten::baddbmm") a = 1, b = 2;
  GemmShape s;
  if (name == "aten::mm" || name == "aten::addmm" || name == "aten::_scaled_mm") {
    if (x.rank(a) != 2 || x.rank(b) != 2) return std::nullopt;
    s.m = x.d(a, 0), s.k = x.d(a, 1), s.n = x.d(b, 1);
  } else if (name == "aten::bmm" || name == "aten::baddbmm") {
    if (x.rank(a) != 3 || x.rank(b) != 3) return std::nullopt;
    s.batch = x.d(a, 0), s.m = x.d(a, 1), s.k = x.d(a, 2), s.n = x.d(b, 2);
  } else if (name == "aten::linear") {  // x[..., K] . W[N, K]^T
    if (x.rank(a) < 1 || x.rank(b) != 2) return std::nullopt;
    double rows = 1;
    for (uint32_t i = 0; i + 1 < x.rank(a); ++i) rows *= static_cast<double>(x.d(a, i));
    s.m = rows, s.k = x.d(a, x.rank(a) - 1), s.n = x.d(b, 0);
  } else if (name == "aten::matmul") {  // [..., M, K] x [K, N] (a weight) or batched
    if (x.rank(a) < 2 || x.rank(b) < 2) return std::nullopt;
    double rows = 1;
    for (uint32_t i = 0; i + 2 < x.rank(a); ++i) rows *= static_cast<double>(x.d(a, i));
    s.m = static_cast<double>(x.d(a, x.rank(a) - 2)) * (x.rank(b) == 2 ? rows : 1);
    s.batch = x.rank(b) == 2 ? 1 : rows;
    s.k = x.d(a, x.rank(a) - 1), s.n = x.d(b, x.rank(b) - 1);
  } else {
    return std::nullopt;
  }
  s.text = x.text(a) + "x" + x.text(b);
  if (!(s.m > 0 && s.n > 0 && s.k > 0 && s.batch > 0)) return std::nullopt;
  return s;
}

}  // namespace chokepoint::analyses
