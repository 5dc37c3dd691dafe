// What-ifs: the recorded steps replayed with one remedy applied (step_graph.h, replay.h),
// against the same steps replayed as they were, both without the recording's own cost
// (recording_cost.h). One function per remedy in remedies/, each stating what it assumes;
// rules/ turns the estimates into advice (rules/remedies.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/index.h"
#include "analyses/kernel_class.h"
#include "analyses/steps.h"
#include "analyses/whatif/recording_cost.h"
#include "analyses/whatif/replay.h"
#include "analyses/whatif/step_graph.h"
#include "machine/ceilings.h"

namespace chokepoint::analyses::whatif {

enum class Remedy : uint8_t {
  kCudaGraphs,      // CUDA Graphs / torch.compile(mode="reduce-overhead")
  kAutocastBf16,    // torch.autocast("cuda", dtype=torch.bfloat16)
  kTf32,            // torch.set_float32_matmul_precision("high")
  kLoaderWorkers,   // DataLoader(num_workers=N, pin_memory=True, persistent_workers=True)
  kPinnedCopies,    // pinned host memory + .to(device, non_blocking=True)
  kDeferSyncs,      // keep values on the GPU; .item()/.cpu() every N steps
  kCompileFusion,   // torch.compile: fused elementwise chains
  kBiggerBatch,     // 4x the batch
  kFusedOptimizer,  // torch.optim.AdamW(fused=True) and friends
  kChannelsLast,    // model.to(memory_format=torch.channels_last)
  kNoEmptyCache,    // no torch.cuda.empty_cache() / cudaFree in the loop
  kFullGrid,        // launch at least one wave of blocks (custom kernels' grid size)
  // Distributed jobs: estimated across ranks (distributed/cross_rank.h), not replayed.
  kFixStraggler,      // remove the straggler rank's extra time
  kOverlapComm,       // hide the exposed collectives behind compute (DDP buckets, FSDP prefetch)
  kAccumulateNoSync,  // all-reduce every 4th step: gradient accumulation under no_sync()
};
inline constexpr int kNumRemedies = 15;
const char* remedy_id(Remedy r);  // "cuda-graphs", "autocast-bf16", ...

// What the remedies read about each GPU node, computed once.
struct NodeInfo {
  KernelClass kclass = KernelClass::kOther;
  Precision precision = Precision::kUnknown;
  TensorCores tensor_cores = TensorCores::kUnknown;
  bool kernel = false;
  bool in_optimizer = false;      // launched by a call inside Optimizer.step
  bool layout_transpose = false;  // cuDNN's nchwToNhwc / nhwcToNchw
  bool nchw_kernel = false;       // an ATen kernel specialised for NCHW (batch norm, pooling)
  double bytes = 0;               // memcpy/memset bytes; kernels: bytes their op moves, 0 unknown
  double flops = 0;               // GEMM-like ops with recorded shapes, 0 unknown
};

struct Context {
  const timeline::Timeline& tl;
  const TimelineIndex& ix;
  const StepGraph& g;
  const machine::Ceilings& ceilings;
  std::vector<NodeInfo> nodes;
  RecordingCost cost;
  Plan recorded;  // the trace as it was
  Plan plain;     // ... without the recording's cost
  ReplayResult recorded_run;
  ReplayResult plain_run;
  int cpus = 0;                 // CPUs of the host that ran it, 0 unknown (a recording knows)
  int loader_workers = -1;      // DataLoader workers seen by the sampler, -1 unknown
  bool torch_compiled = false;  // torch.compile's compiled regions in the trace (runs_torch_compile)
};

// `cost`: the recording's cost model to take out (default: recording_cost_for the trace).
Context make_context(const timeline::Timeline& tl, const TimelineIndex& ix, const StepGraph& g,
                     const machine::Ceilings& c, const RecordingCost* cost = nullptr);

struct Estimate {
  Remedy remedy = Remedy::kCudaGraphs;
  double speedup = 1.0;       // whole-step (bigger batch: samples/s) gain
  double step_ms_before = 0;  // per step, replayed without the recording's cost
  double step_ms_after = 0;
  std::string change;  // what the replay changed, in numbers
  std::vector<std::string> assumptions;
  // From a CUPTI trace, the gain with the tracer's cost at the high end it measured per call,
  // where that moves it 5% or more: the estimate is then the range between the two, and the
  // first assumption says why (analysis.cc).
  std::optional<double> speedup_at_high_cost;
  // dataloader-workers: the worker count the replay assumed (0 not sized), which the
  // finding's fix then names (issue 44: the replay sized 13, the fix said num_workers=11).
  int workers = 0;
  // torch-compile: the chains the replay fused, per replayed step, which the
  // memory-bound-elementwise finding then cites (issue 44: the finding counted 15 chains,
  // 4.24 -> 1.97 ms, beside the replay's 21 chains, 5.73 -> 2.76 ms).
  struct FusedChains {
    double chains = 0, kernels = 0;      // per step
    double before_ms = 0, after_ms = 0;  // their kernel time per step, and fused
  };
  std::optional<FusedChains> fused_chains;
};

// Every remedy that applies to the trace, with its estimate (largest gain first).
std::vector<Estimate> estimate_remedies(const Context& c);

// Shared by the remedies: replays `p` and fills the estimate's figures against the plain
// baseline (samples_factor scales the gain for throughput remedies).
Estimate finish(const Context& c, Remedy r, const Plan& p, std::string change, std::vector<std::string> assumptions);

// The remedies, one file each (remedies/).
// What the trace shows is already on, so that nothing advises switching it on: CUDA
// graph replays (cudaGraphLaunch calls), a fused optimizer (its op or kernels), torch.compile
// (its compiled regions).
bool replays_cuda_graphs(const Context& c);
bool optimizer_runs_fused(const Context& c);
// Most (80%) of the matrix kernels' time of known precision runs in 16 bits or narrower
// (autocast or a half model), or, of FP32 matrix work, on TF32 (remedies/precision.cc).
bool runs_mixed_precision(const Context& c);
bool runs_tf32(const Context& c);
bool runs_torch_compile(const timeline::Timeline& tl);  // once, into Context::torch_compiled
std::vector<Remedy> already_applied(const Context& c);
// Whether already_applied can see remedy `r` in place (so a trace without it does not have it).
bool seen_in_place(Remedy r);

std::optional<Estimate> estimate_cuda_graphs(const Context& c);
std::optional<Estimate> estimate_autocast_bf16(const Context& c);
std::optional<Estimate> estimate_tf32(const Context& c);
std::optional<Estimate> estimate_loader_workers(const Context& c);
std::optional<Estimate> estimate_pinned_copies(const Context& c);
std::optional<Estimate> estimate_defer_syncs(const Context& c);
std::optional<Estimate> estimate_compile_fusion(const Context& c);
std::optional<Estimate> estimate_bigger_batch(const Context& c);
std::optional<Estimate> estimate_fused_optimizer(const Context& c);
std::optional<Estimate> estimate_channels_last(const Context& c);
// The tensors an ATen vectorized elementwise kernel reads and writes (the N of its
// std::array<char*, N> of operands), from its name; 0 for other kernels (channels-last).
int elementwise_operands(std::string_view kernel);
std::optional<Estimate> estimate_no_empty_cache(const Context& c);
std::optional<Estimate> estimate_full_grid(const Context& c);

}  // namespace chokepoint::analyses::whatif
