// allocator-churn: cudaMalloc/cudaFree (empty_cache, changing shapes) inside the
// steady-state loop; cudaFree also synchronizes the device.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// PyTorch's caching allocator makes steady-state steps allocation-free; any cudaMalloc
// or cudaFree after the first step means the cache was emptied or shapes keep growing
// (PyTorch CUDA semantics notes). Report from one call per step on.
constexpr double kMinCallsPerStep = 1.0;
}  // namespace

std::optional<Finding> allocator_churn(const TraceEvidence& c) {
  using analyses::IdleCause;
  const auto& api = c.a.api;
  if (api.steady_windows == 0) return std::nullopt;
  const double per_step = static_cast<double>(api.steady_allocs + api.steady_frees) /
                          static_cast<double>(api.steady_windows);
  if (per_step < kMinCallsPerStep) return std::nullopt;
  const auto& t = c.a.total();
  const TimeNs idle = t.idle_of(IdleCause::kAllocator);
  // The steps' share of allocator time (host side) and of GPU idle it caused.
  const double api_ms = static_cast<double>(api.steady_allocator_ns) / 1e6 / static_cast<double>(api.steady_windows);
  const double share = c.a.pct(idle);
  const double speedup = analyses::projected_speedup(t.duration, idle, 0);

  Finding f = new_finding(share, speedup);
  f.remedies = {"no-empty-cache"};
  f.title = fmt::format("{:.0f} cudaMalloc/cudaFree calls per step after warm-up ({:.2f} ms per step)", per_step,
                        api_ms);
  f.detail = fmt::format(
      "The caching allocator should make steady-state steps allocation-free. Here each step "
      "after the first calls cudaMalloc {:.0f} and cudaFree {:.0f} times; cudaFree waits for the "
      "whole device, and the GPU idles {:.2f} ms per step around these calls.",
      static_cast<double>(api.steady_allocs) / static_cast<double>(api.steady_windows),
      static_cast<double>(api.steady_frees) / static_cast<double>(api.steady_windows), c.a.ms_per_step(idle));
  f.evidence = {evidence("allocator_calls_per_step", per_step, "", kMinCallsPerStep),
                evidence("allocator_ms_per_step", api_ms, "ms"), evidence("gpu_idle_from_allocator_pct", share, "%")};
  f.recommendation =
      "Remove torch.cuda.empty_cache() (and gc-driven frees) from the training loop; keep shapes "
      "stable (pad or bucket variable-length batches, pre-allocate at the maximum sequence length); "
      "or let the allocator grow segments in place: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain allocator-churn` prints.
extern const Rule allocator_churn_rule = {
    .id = "allocator-churn",
    .category = Category::kHost,
    .trace = allocator_churn,
    .meaning =
        "cudaMalloc/cudaFree inside the steady-state loop: the caching allocator was emptied "
        "(empty_cache) or shapes keep changing; cudaFree also synchronizes the device.",
    .detection = "From a trace: allocation or free API calls after the first step, one per step or more.",
    .action =
        "Remove torch.cuda.empty_cache() from the loop; pad or bucket variable shapes; "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. Remedy no-empty-cache.",
};

}  // namespace chokepoint::rules
