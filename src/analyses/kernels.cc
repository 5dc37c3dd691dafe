#include "analyses/kernels.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace chokepoint::analyses {

using timeline::GpuOpKind;
using timeline::Timeline;

namespace {

// A kernel shorter than this with a small grid is a small problem, not a badly shaped
// launch: only longer ones count as "less than one wave" work (20 us is ~4 launch
// latencies on the H200, docs/FORMATS.md "H200 figures").
constexpr TimeNs kSmallGridMinNs = 20'000;

bool is_matrix(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kConv || c == KernelClass::kAttention;
}

// First floating-point tensor type among the launching op's inputs.
Precision op_precision(const Timeline& tl, int32_t op_row) {
  if (op_row < 0) return Precision::kUnknown;
  const uint32_t in = tl.cpu_ranges.inputs[op_row];
  if (in == timeline::CpuRanges::kNoInputs) return Precision::kUnknown;
  const auto& oi = tl.op_inputs;
  for (uint32_t j = 0; j < oi.num_inputs(in); ++j) {
    Precision p = precision_of_type(tl.strings.view(oi.input_type(in, j)));
    if (p != Precision::kUnknown) return p;
  }
  return Precision::kUnknown;
}

}  // namespace

void kernel_precision(const Timeline& tl, const TimelineIndex& ix, size_t op, Precision* precision, TensorCores* tc) {
  const auto name = tl.strings.view(tl.gpu_ops.name[op]);
  Precision p = op_precision(tl, ix.op_row[op]);
  if (p == Precision::kUnknown) p = precision_from_name(name);
  TensorCores t = TensorCores::kUnknown;
  if (is_matrix(ix.kclass[op])) {
    t = tensor_cores_from_name(name);
    // Half, bfloat16, FP8 and INT8 matrix work always runs on tensor cores where they exist.
    if (t == TensorCores::kUnknown &&
        (p == Precision::kBf16 || p == Precision::kFp16 || p == Precision::kFp8 || p == Precision::kInt8)) {
      t = TensorCores::kYes;
    }
    if (p == Precision::kFp32 && t == TensorCores::kYes) p = Precision::kTf32;
  }
  *precision = p;
  *tc = t;
}

KernelStats compute_kernel_stats(const Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                                 int32_t num_sms) {
  KernelStats ks;
  ks.num_sms = num_sms;
  const auto& g = tl.gpu_ops;
  std::unordered_map<timeline::StringId, size_t> row_of;
  std::vector<double> occ_weight;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] != GpuOpKind::kKernel || wm.gpu_op[i] < 0) continue;
    const TimeNs dur = g.end[i] - g.start[i];
    auto [it, fresh] = row_of.emplace(g.name[i], ks.kernels.size());
    if (fresh) {
      KernelSummary s;
      s.name = g.name[i];
      s.kclass = ix.kclass[i];
      kernel_precision(tl, ix, i, &s.precision, &s.tensor_cores);
      ks.kernels.push_back(s);
      occ_weight.push_back(0);
    }
    KernelSummary& s = ks.kernels[it->second];
    const auto& gr = g.grid[i];
    const int64_t blocks = int64_t{gr[0]} * gr[1] * gr[2];
    s.max_blocks = s.calls == 0 ? blocks : std::max(s.max_blocks, blocks);
    s.min_blocks = s.calls == 0 ? blocks : std::min(s.min_blocks, blocks);
    ++s.calls;
    s.total_ns += dur;
    if (!std::isnan(g.occupancy_pct[i])) {
      double& w = occ_weight[it->second];
      s.mean_occupancy_pct = (std::max(0.0, s.mean_occupancy_pct) * w + g.occupancy_pct[i] * dur) /
                             std::max(1.0, w + dur);
      w += dur;
    }
    ks.kernel_ns += dur;
    if (is_matrix(s.kclass)) {
      ks.matrix_ns += dur;
      if (s.tensor_cores == TensorCores::kYes) ks.matrix_tc_ns += dur;
      if (s.tensor_cores == TensorCores::kNo) {
        ks.matrix_no_tc_ns += dur;
        if (s.precision == Precision::kFp32) ks.matrix_fp32_no_tc_ns += dur;
      }
    }
    // NCCL sizes its grids to its channels on purpose: a collective is no small problem.
    if (num_sms > 0 && blocks > 0 && blocks < num_sms && dur >= kSmallGridMinNs &&
        s.kclass != KernelClass::kCommunication) {
      ks.small_grid_ns += dur;
      ks.small_grid_ideal_ns += dur * blocks / num_sms;
      ++ks.small_grid_calls;
    }
  }
  std::sort(ks.kernels.begin(), ks.kernels.end(),
            [](const KernelSummary& a, const KernelSummary& b) { return a.total_ns > b.total_ns; });
  return ks;
}

}  // namespace chokepoint::analyses
