#include "analyses/whatif/whatif.h"

#include <algorithm>

#include "analyses/kernels.h"
#include "analyses/op_shapes.h"

namespace chokepoint::analyses::whatif {

namespace {

bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// cuDNN's layout transposes around NHWC kernels when the tensors are NCHW.
bool is_layout_transpose(std::string_view name) { return contains(name, "nchwToNhwc") || contains(name, "nhwcToNchw"); }

// ATen kernels that exist in an NCHW and a channels_last flavour and are slow in the
// first for half-precision convnets (batch norm statistics and backward, pooling).
bool is_nchw_kernel(std::string_view name) {
  if (contains(name, "channels_last") || contains(name, "nhwc")) return false;
  return contains(name, "batch_norm") || contains(name, "max_pool_backward_nchw") ||
         contains(name, "max_pool_forward_nchw") || contains(name, "avg_pool2d");
}

}  // namespace

const char* remedy_id(Remedy r) {
  switch (r) {
    case Remedy::kCudaGraphs: return "cuda-graphs";
    case Remedy::kAutocastBf16: return "autocast-bf16";
    case Remedy::kTf32: return "tf32";
    case Remedy::kLoaderWorkers: return "dataloader-workers";
    case Remedy::kPinnedCopies: return "pinned-copies";
    case Remedy::kDeferSyncs: return "defer-syncs";
    case Remedy::kCompileFusion: return "torch-compile";
    case Remedy::kBiggerBatch: return "bigger-batch";
    case Remedy::kFusedOptimizer: return "fused-optimizer";
    case Remedy::kChannelsLast: return "channels-last";
    case Remedy::kNoEmptyCache: return "no-empty-cache";
    case Remedy::kFullGrid: return "full-grid";
    case Remedy::kFixStraggler: return "fix-straggler";
    case Remedy::kOverlapComm: return "overlap-communication";
    case Remedy::kAccumulateNoSync: return "accumulate-no-sync";
  }
  return "unknown";
}

Context make_context(const timeline::Timeline& tl, const TimelineIndex& ix, const StepGraph& g,
                     const machine::Ceilings& c, const RecordingCost* cost) {
  Context ctx{tl, ix, g, c, {}, {}, {}, {}, {}, {}};
  ctx.torch_compiled = runs_torch_compile(tl);
  const auto& ops = tl.gpu_ops;
  ctx.nodes.resize(g.gpu.size());
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const uint32_t row = g.gpu[k].row;
    NodeInfo& n = ctx.nodes[k];
    n.kclass = ix.kclass[row];
    n.kernel = ops.kind[row] == timeline::GpuOpKind::kKernel;
    if (n.kernel) {
      kernel_precision(tl, ix, row, &n.precision, &n.tensor_cores);
      const auto name = tl.strings.view(ops.name[row]);
      n.layout_transpose = is_layout_transpose(name);
      n.nchw_kernel = is_nchw_kernel(name);
      const int32_t op = ix.op_row[row];
      if (n.kclass == KernelClass::kGemm) {
        if (const auto sh = gemm_shape(tl, op)) {
          n.flops = sh->flops();
          n.bytes = sh->bytes(element_bytes(n.precision == Precision::kTf32 ? Precision::kFp32 : n.precision));
        }
      } else {
        n.bytes = ix.op_bytes[row];
      }
    } else {
      n.bytes = static_cast<double>(std::max<int64_t>(0, ops.bytes[row]));
    }
    const int32_t launch = g.gpu[k].launch;
    n.in_optimizer = launch >= 0 && (g.host[launch].flags & kInOptimizer) != 0;
  }
  ctx.cost = cost != nullptr ? *cost : recording_cost_for(tl);
  ctx.recorded = Plan::baseline(g);
  ctx.plain = without_recording_cost(g, ctx.recorded, ctx.cost);
  ctx.recorded_run = replay(g, ctx.recorded);
  ctx.plain_run = replay(g, ctx.plain);
  return ctx;
}

Estimate finish(const Context& c, Remedy r, const Plan& p, std::string change, std::vector<std::string> assumptions) {
  const ReplayResult after = replay(c.g, p);
  Estimate e;
  e.remedy = r;
  const double before_ns = steady_step_ns(c.plain_run);
  const double after_ns = std::max(steady_step_ns(after), static_cast<double>(p.min_step));
  e.step_ms_before = before_ns / 1e6;
  e.step_ms_after = after_ns / 1e6;
  e.speedup = after_ns > 0 ? p.samples_factor * before_ns / after_ns : 1.0;
  e.change = std::move(change);
  e.assumptions = std::move(assumptions);
  if (c.cost.known()) {
    e.assumptions.push_back("Both sides are replayed without " + c.cost.recorder +
                            "'s own cost on the host (measured per recorded op and call on the H200), so the "
                            "estimate is for the run without it.");
  }
  return e;
}

std::vector<Estimate> estimate_remedies(const Context& c) {
  std::vector<Estimate> out;
  if (c.g.host.empty() && c.g.gpu.empty()) return out;
  using Fn = std::optional<Estimate> (*)(const Context&);
  static constexpr Fn kAll[] = {
      estimate_cuda_graphs,     estimate_autocast_bf16, estimate_tf32,           estimate_loader_workers,
      estimate_pinned_copies,   estimate_defer_syncs,   estimate_compile_fusion, estimate_bigger_batch,
      estimate_fused_optimizer, estimate_channels_last, estimate_no_empty_cache, estimate_full_grid,
  };
  // What is already on is neither replayed nor advised (a TF32 job's few FP32 kernels
  // would replay to 1.003x "with TF32").
  const std::vector<Remedy> on = already_applied(c);
  for (Fn f : kAll) {
    auto e = f(c);
    if (e && std::find(on.begin(), on.end(), e->remedy) == on.end()) out.push_back(std::move(*e));
  }
  std::stable_sort(out.begin(), out.end(), [](const Estimate& a, const Estimate& b) { return a.speedup > b.speedup; });
  return out;
}

bool seen_in_place(Remedy r) {
  return r == Remedy::kCudaGraphs || r == Remedy::kFusedOptimizer || r == Remedy::kCompileFusion ||
         r == Remedy::kAutocastBf16 || r == Remedy::kTf32;
}

std::vector<Remedy> already_applied(const Context& c) {
  std::vector<Remedy> on;
  if (replays_cuda_graphs(c)) on.push_back(Remedy::kCudaGraphs);
  if (optimizer_runs_fused(c)) on.push_back(Remedy::kFusedOptimizer);
  if (c.torch_compiled) on.push_back(Remedy::kCompileFusion);
  if (runs_mixed_precision(c)) {
    on.push_back(Remedy::kAutocastBf16);
  } else if (runs_tf32(c)) {
    on.push_back(Remedy::kTf32);
  }
  return on;
}

}  // namespace chokepoint::analyses::whatif
