// input-pipeline-stall: the GPU waits while the DataLoader produces the next batch.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// The PyTorch TensorBoard plugin recommends more DataLoader workers when data loading
// exceeds 5% of the step (REFERENCE.md section 3).
constexpr double kMinSharePct = 5.0;
// Never suggest fewer workers than this (one to load while one is consumed) or more
// than the usual core budget of a GPU's share of a node.
constexpr int kMinWorkers = 2, kMaxWorkers = 16;
}  // namespace

std::optional<Finding> input_pipeline_stall(const RuleContext& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const TimeNs idle = t.idle_of(IdleCause::kInput);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct) return std::nullopt;

  // Time the stepping threads spent inside DataLoader.__next__ (it moves to workers).
  TimeNs loader = 0;
  for (const auto& w : c.a.windows.steps) {
    if (const auto* th = c.a.index.thread(w.pid, w.tid)) loader += th->dataloader.overlap(w.start, w.end);
  }
  const TimeNs rest = t.duration - idle;
  const double speedup = analyses::projected_speedup(t.duration, idle, 0);
  // Enough workers that each has (loader time / time left per step) steps to make a batch.
  const double per_step_rest = std::max(1.0, static_cast<double>(rest));
  const int workers = std::clamp(static_cast<int>(std::ceil(static_cast<double>(loader) / per_step_rest)) + 1,
                                 kMinWorkers, kMaxWorkers);

  Finding f = new_finding("input-pipeline-stall", Category::kInput, share, speedup);
  f.title = fmt::format("GPU waits {:.1f} ms per step for the DataLoader ({:.0f}% of the step)",
                        c.a.ms_per_step(idle), share);
  f.detail = fmt::format(
      "The thread that launches GPU work spends {:.1f} ms per step inside DataLoader.__next__; "
      "the GPU is idle for {:.1f} ms of that. The rest of the step takes {:.1f} ms, so batches "
      "must be ready {:.1f}x faster than they are made now.",
      c.a.ms_per_step(loader), c.a.ms_per_step(idle), c.a.ms_per_step(rest),
      rest > 0 ? static_cast<double>(loader) / static_cast<double>(rest) : 0.0);
  f.evidence = {evidence("gpu_idle_waiting_for_data_pct", share, "%", kMinSharePct),
                evidence("dataloader_ms_per_step", c.a.ms_per_step(loader), "ms"),
                evidence("rest_of_step_ms", c.a.ms_per_step(rest), "ms"),
                evidence("gpu_busy_pct", c.a.pct(t.busy), "%")};
  f.recommendation = fmt::format(
      "Load batches in parallel and ahead of the GPU: DataLoader(..., num_workers={}, "
      "pin_memory=True, persistent_workers=True, prefetch_factor=4), and .to(device, "
      "non_blocking=True). If workers are already used, move decoding/augmentation to the GPU "
      "(e.g. NVIDIA DALI, torchvision.transforms.v2 on CUDA tensors) or pre-process the dataset once.",
      workers);
  return f;
}

}  // namespace chokepoint::rules
