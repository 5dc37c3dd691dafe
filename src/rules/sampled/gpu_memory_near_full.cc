// gpu-memory-near-full: device memory in use reached 95% of its size. The next larger
// batch, a longer sequence or fragmentation ends in an out-of-memory error, and allocator
// retries (cudaFree + cudaMalloc when the cache cannot serve a request) slow steps down.
#include <algorithm>

#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// The catalogue of docs/ARCHITECTURE.md "Report contract": above 95% of device memory.
constexpr double kNearFullFraction = 0.95;
}  // namespace

std::optional<Finding> gpu_memory_near_full(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const GpuLive* g : c.la.judged_gpus()) {
    if (!g->mem_used_max_bytes || !g->mem_total_bytes || *g->mem_total_bytes <= 0) continue;
    const double total = *g->mem_total_bytes;
    const double peak = *g->mem_used_max_bytes / total;
    if (peak < kNearFullFraction) continue;
    const samples::Series* used = gpu_series(c, *g, MetricId::kGpuMemoryUsedBytes);
    const int64_t age = max_age_ns(c.la);
    const double share = tick_share(run_ticks(c.la), [&](int64_t t) -> std::optional<bool> {
                           const auto v = analyses::sampled::held(used, t, age);
                           if (!v) return std::nullopt;
                           return *v >= kNearFullFraction * total;
                         }).value_or(0);
    Finding f = new_finding(100 * share, std::nullopt);
    // A risk, not a measured loss of time: never more than a warning.
    f.severity = std::min(f.severity, Severity::kWarning);  // at most a warning (info < warning < critical)
    f.title = fmt::format("{}: device memory {:.0f}% full at peak ({:.1f} of {:.1f} GiB)", gpu_label(*g), 100 * peak,
                          *g->mem_used_max_bytes / (1 << 30), total / (1 << 30));
    f.detail = fmt::format(
        "Memory in use stayed at or above {:.0f}% of the device for {:.0f}% of the run. Little headroom "
        "means an out-of-memory error on a larger batch or sequence, and allocator retries (freeing "
        "the cache and allocating again) when fragmented blocks cannot serve a request. A framework "
        "that reserves memory up front (JAX preallocates 75%, TensorFlow all of it) reads full by design.",
        100 * kNearFullFraction, 100 * share);
    f.evidence = {evidence("gpu_memory_used_peak_pct", 100 * peak, "%", 100 * kNearFullFraction),
                  evidence("gpu_memory_used_peak_gib", *g->mem_used_max_bytes / (1 << 30), "GiB"),
                  evidence("run_near_full_pct", 100 * share, "%")};
    f.recommendation =
        "Check allocated against reserved with torch.cuda.memory_summary() and "
        "torch.cuda.max_memory_allocated(); cut activation memory (activation checkpointing, BF16 autocast, "
        "a smaller micro-batch with gradient accumulation), and set "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation.";
    if (!worst || f.time_share_pct > worst->time_share_pct) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain gpu-memory-near-full` prints.
extern const Rule gpu_memory_near_full_rule = {
    .id = "gpu-memory-near-full",
    .category = Category::kMemory,
    .samples = gpu_memory_near_full,
    .meaning =
        "Device memory in use reached 95% of its size: the next larger batch or sequence ends in "
        "out-of-memory, and allocator retries slow steps down.",
    .detection = "From live samples: NVML memory used against total.",
    .action =
        "Leave headroom: smaller batch with gradient accumulation, activation checkpointing, "
        "bf16; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation.",
};

}  // namespace chokepoint::rules
