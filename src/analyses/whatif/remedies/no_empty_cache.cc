// no-empty-cache: no torch.cuda.empty_cache() (or other frees to the driver) inside the
// loop, stable shapes, so the caching allocator serves every allocation after warm-up.
//
// Replay: cudaMalloc/cudaFree calls in every step but the first cost nothing and no
// longer wait for the device (cudaFree synchronizes it).
#include <fmt/format.h>

#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

std::optional<Estimate> estimate_no_empty_cache(const Context& c) {
  const auto& g = c.g;
  Plan p = c.plain;
  int64_t calls = 0;
  TimeNs removed = 0;
  for (size_t i = 0; i < g.host.size(); ++i) {
    const HostEvent& e = g.host[i];
    if ((e.api != timeline::ApiClass::kAlloc && e.api != timeline::ApiClass::kFree) || e.window < 1) continue;
    removed += e.end - e.start;
    p.dur[i] = 0;
    p.waits[i] = 0;
    ++calls;
  }
  if (calls == 0) return std::nullopt;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps - 1));
  return finish(c, Remedy::kNoEmptyCache, p,
                fmt::format("{:.0f} cudaMalloc/cudaFree calls per step after the first ({:.2f} ms per step) go",
                            calls / steps, static_cast<double>(removed) / 1e6 / steps),
                {"After warm-up the caching allocator serves every allocation (no empty_cache(), shapes padded or "
                 "bucketed; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True for the rest).",
                 "The first step's allocations are warm-up and stay."});
}

}  // namespace chokepoint::analyses::whatif
