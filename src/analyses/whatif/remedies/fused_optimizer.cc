// fused-optimizer: torch.optim.AdamW(fused=True) (Adam, SGD alike): one multi-tensor
// kernel per group of parameters instead of a dozen kernels per parameter (foreach=False)
// or per list chunk (foreach).
//
// Replay: the calls inside each Optimizer.step annotation become one call costing the
// fused optimizer's host time, and their kernels one kernel that moves each parameter's
// value, gradient and two moments once (read 4, write 3 FP32 values: 28 bytes per
// element) at the HBM rate. The element count comes from the recorded shapes (addcdiv_
// takes each parameter once); without them, the fused kernel is taken as a third of the
// recorded optimizer kernels (the for-loop AdamW moves ~84 bytes per element).
#include <fmt/format.h>

#include "analyses/op_shapes.h"
#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace {
constexpr double kFusedBytesPerElement = 28;
constexpr double kUnfusedToFused = 3.0;
// Host time of one fused optimizer step: the Python of Optimizer.step and grouping the
// tensors (~0.1 ms) plus a little per tensor (the H200 pair: 152 tensors).
constexpr TimeNs kFusedHostNs = 100'000;
constexpr TimeNs kFusedHostPerTensorNs = 500;

// Regions: maximal runs of calls inside Optimizer.step.
std::vector<std::pair<size_t, size_t>> optimizer_regions(const StepGraph& g) {
  std::vector<std::pair<size_t, size_t>> regions;
  for (size_t i = 0; i < g.host.size();) {
    if (!(g.host[i].flags & kInOptimizer)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < g.host.size() && (g.host[j].flags & kInOptimizer)) ++j;
    regions.emplace_back(i, j);
    i = j;
  }
  return regions;
}

// Whether the optimizer already runs fused: its op (aten::_fused_adamw_, _fused_sgd_, ...)
// or the kernels that op launches (multi_tensor_apply_kernel<...FusedAdamMathFunctor>,
// seen in tests/data/kineto/healthy_bf16, recorded with AdamW(fused=True)).
bool already_fused(const Context& c, size_t k) {
  const std::string_view kernel = c.tl.strings.view(c.tl.gpu_ops.name[c.g.gpu[k].row]);
  if (kernel.find("FusedAdam") != std::string_view::npos || kernel.find("FusedSgd") != std::string_view::npos ||
      kernel.find("FusedAdagrad") != std::string_view::npos) {
    return true;
  }
  const int32_t op = c.ix.op_row[c.g.gpu[k].row];
  return op >= 0 && c.tl.strings.view(c.tl.cpu_ranges.name[op]).rfind("aten::_fused_", 0) == 0;
}
}  // namespace

bool optimizer_runs_fused(const Context& c) {
  for (size_t k = 0; k < c.g.gpu.size(); ++k) {
    if (c.nodes[k].kernel && already_fused(c, k)) return true;
  }
  return false;
}

std::optional<Estimate> estimate_fused_optimizer(const Context& c) {
  using namespace remedy;
  const auto& g = c.g;
  const std::vector<std::pair<size_t, size_t>> regions = optimizer_regions(g);
  if (regions.empty()) return std::nullopt;
  std::vector<int32_t> region_of(g.host.size(), -1);
  for (size_t r = 0; r < regions.size(); ++r) {
    for (size_t i = regions[r].first; i < regions[r].second; ++i) region_of[i] = static_cast<int32_t>(r);
  }
  // Parameters (addcdiv_ takes each once) and kernel time per region.
  std::vector<double> elements(regions.size(), 0), tensors(regions.size(), 0);
  std::vector<TimeNs> kernel_ns(regions.size(), 0);
  std::vector<int32_t> first_node(regions.size(), -1);
  std::vector<int32_t> seen_op;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const int32_t l = g.gpu[k].launch;
    if (l < 0 || region_of[l] < 0) continue;
    if (already_fused(c, k)) return std::nullopt;  // no advice to switch on what is on
    const int32_t r = region_of[l];
    kernel_ns[r] += g.gpu[k].dur;
    if (first_node[r] < 0) first_node[r] = static_cast<int32_t>(k);
    const int32_t op = c.ix.op_row[g.gpu[k].row];
    if (op >= 0 && c.tl.strings.view(c.tl.cpu_ranges.name[op]) == "aten::addcdiv_") {
      elements[r] += op_input_numel(c.tl, op, 0);
      tensors[r] += 1;
    }
  }
  Plan p = c.plain;
  TimeNs host_before = 0, host_after = 0, gpu_before = 0, gpu_after = 0;
  bool shapes = true;
  for (size_t r = 0; r < regions.size(); ++r) {
    const auto [a, b] = regions[r];
    for (size_t i = a; i < b; ++i) host_before += p.gap[i] + p.dur[i];
    const TimeNs host = kFusedHostNs + static_cast<TimeNs>(tensors[r]) * kFusedHostPerTensorNs;
    p.dur[a] = host;
    p.waits[a] = 0;
    for (size_t i = a + 1; i < b; ++i) {
      p.gap[i] = 0;
      p.dur[i] = 0;
      p.waits[i] = 0;
    }
    host_after += p.gap[a] + host;
    TimeNs fused = elements[r] > 0 ? std::max(kKernelFloorNs, hbm_time(c, kFusedBytesPerElement * elements[r]))
                                   : ns(static_cast<double>(kernel_ns[r]) / kUnfusedToFused);
    shapes &= elements[r] > 0;
    fused = std::min(fused, kernel_ns[r]);
    gpu_before += kernel_ns[r];
    gpu_after += fused;
    for (size_t k = 0; k < g.gpu.size(); ++k) {
      const int32_t l = g.gpu[k].launch;
      if (l < 0 || region_of[l] != static_cast<int32_t>(r)) continue;
      if (static_cast<int32_t>(k) == first_node[r]) {
        p.node_dur[k] = fused;
        p.node_launch[k] = static_cast<int32_t>(a);
      } else {
        p.node_removed[k] = 1;
      }
    }
  }
  std::vector<std::string> assumptions = {
      "The optimizer supports fused=True for these parameters (CUDA tensors of one dtype; AdamW, Adam, SGD, "
      "Adagrad in PyTorch 2.x).",
      fmt::format("The fused step costs the host {:.1f} ms plus {:.1f} us per tensor.", kFusedHostNs / 1e6,
                  kFusedHostPerTensorNs / 1e3)};
  if (!shapes) {
    assumptions.push_back(
        "Without recorded shapes the fused kernel is taken as a third of the optimizer's kernel "
        "time (record_shapes=True gives the exact bytes).");
  }
  return finish(c, Remedy::kFusedOptimizer, p,
                fmt::format("the optimizer step's host time goes from {} to {} per step and its kernels from {} to {}",
                            per_step_ms(c, host_before), per_step_ms(c, host_after), per_step_ms(c, gpu_before),
                            per_step_ms(c, gpu_after)),
                std::move(assumptions));
}

}  // namespace chokepoint::analyses::whatif
