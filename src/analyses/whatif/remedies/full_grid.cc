// full-grid: give each launch of a custom kernel at least one block per SM (several
// waves, or a grid-stride loop sized from the SM count).
//
// Replay: a kernel longer than 20 us launched with fewer blocks than the GPU has SMs
// runs its work spread over all SMs: blocks/SMs of its time, but no faster than moving
// its op's bytes through HBM (when shapes were recorded) nor a kernel's floor.
#include <fmt/format.h>

#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace {
// kernels.cc's line for "less than one wave" work: shorter kernels are small problems.
constexpr TimeNs kMinNs = 20'000;
}  // namespace

std::optional<Estimate> estimate_full_grid(const Context& c) {
  using namespace remedy;
  const int sms = c.ceilings.num_sms;
  if (sms <= 0) return std::nullopt;
  const auto& g = c.g;
  const auto& ops = c.tl.gpu_ops;
  Plan p = c.plain;
  int64_t kernels = 0, spread_any = 0;
  TimeNs before = 0, after = 0;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    if (!c.nodes[k].kernel || g.gpu[k].dur < kMinNs || c.nodes[k].kclass == KernelClass::kCommunication) continue;
    const auto& gr = ops.grid[g.gpu[k].row];
    const int64_t blocks = int64_t{gr[0]} * gr[1] * gr[2];
    if (blocks <= 0 || blocks >= sms) continue;
    const TimeNs t = g.gpu[k].dur;
    TimeNs spread = ns(static_cast<double>(t) * static_cast<double>(blocks) / sms);
    spread = std::min(t, std::max({spread, hbm_time(c, c.nodes[k].bytes), kKernelFloorNs}));
    p.node_dur[k] = spread;
    ++spread_any;
    if (g.gpu[k].backlog) continue;  // the step before the trace's: not counted per step (compile_fusion.cc)
    ++kernels;
    before += t;
    after += spread;
  }
  if (spread_any == 0) return std::nullopt;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  return finish(c, Remedy::kFullGrid, p,
                fmt::format("{:.0f} sub-wave launches per step take {} instead of {} with their work spread over "
                            "all {} SMs",
                            kernels / steps, per_step_ms(c, after), per_step_ms(c, before), sms),
                {"The kernel's work divides evenly over more blocks (a grid from the problem size, or a multiple of "
                 "the SM count with a grid-stride loop).",
                 "A floor, not a promise of more: with several blocks per SM a memory-bound kernel also hides more "
                 "latency and can gain more (small_grid measured 12.6x against 8.2x estimated)."});
}

}  // namespace chokepoint::analyses::whatif
