// low-occupancy: kernels launched with fewer blocks than the GPU has SMs leave most of
// the chip idle while they run.
#include <fmt/format.h>

#include "base/plural.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Sub-wave kernel time worth reshaping (5% of the step).
constexpr double kMinSharePct = 5.0;
}  // namespace

std::optional<Finding> low_occupancy(const TraceEvidence& c) {
  const auto& k = c.a.kernels;
  const double share = c.a.pct(k.small_grid_ns);
  if (k.num_sms <= 0 || share < kMinSharePct) return std::nullopt;
  const auto& t = c.a.total();
  // With a full wave each such kernel would take blocks/SMs of its time (the work spread
  // over all SMs); its memory or arithmetic ceiling may stop it earlier, so this is an
  // upper bound.
  const TimeNs saved = k.small_grid_ns - k.small_grid_ideal_ns;
  const double speedup = analyses::projected_speedup(t.duration, saved, t.host_critical);
  const analyses::KernelSummary* top = nullptr;
  for (const auto& ks : k.kernels) {
    if (ks.min_blocks > 0 && ks.min_blocks < k.num_sms) {
      top = &ks;
      break;
    }
  }
  Finding f = new_finding(share, speedup);
  f.remedies = {"full-grid", "bigger-batch"};
  f.title = fmt::format("{:.0f}% of the step runs kernels with fewer blocks than the {} SMs", share, k.num_sms);
  f.detail = fmt::format(
      "{} per step {} less than one wave of blocks{}; the idle SMs cannot help. Spread "
      "over all SMs they would take {:.2f} ms per step instead of {:.2f} ms (an upper bound: "
      "memory bandwidth may cap them first).",
      counted(c.a.per_step(k.small_grid_calls), "launch", "launches"),
      std::llround(c.a.per_step(k.small_grid_calls)) == 1 ? "uses" : "use",
      top ? fmt::format(" (e.g. {} with {} blocks)", std::string(c.tl.strings.view(top->name)).substr(0, 60),
                        top->min_blocks)
          : std::string(),
      c.a.ms_per_step(k.small_grid_ideal_ns), c.a.ms_per_step(k.small_grid_ns));
  f.evidence = {evidence("sub_wave_kernel_pct", share, "%", kMinSharePct), evidence("num_sms", k.num_sms, ""),
                evidence("sub_wave_ms_per_step", c.a.ms_per_step(k.small_grid_ns), "ms")};
  // Sub-wave below one block per SM: it fires at num_sms - 1 blocks or fewer (issue 44: it
  // printed "fires >= 132" for a rule that fires below 132).
  if (top) {
    f.evidence.push_back(
        evidence_at_most("top_kernel_blocks", static_cast<double>(top->min_blocks), "", k.num_sms - 1.0));
  }
  f.recommendation = fmt::format(
      "Give each launch at least one block per SM ({} here, ideally several waves): raise the batch "
      "size or process several items per launch; in custom CUDA/Triton kernels size the grid from "
      "the problem (e.g. triton.cdiv(n, BLOCK)) or as a multiple of the SM count with a grid-stride "
      "loop; for skinny GEMMs let cuBLAS use split-K (larger K tiles) or batch them (torch.bmm).",
      k.num_sms);
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain low-occupancy` prints.
extern const Rule low_occupancy_rule = {
    .id = "low-occupancy",
    .category = Category::kCompute,
    .trace = low_occupancy,
    .meaning =
        "Kernels launched with fewer blocks than the GPU has SMs leave most of the chip idle "
        "while they run.",
    .detection = "From a trace: kernels whose grid is smaller than one wave, 5% of the step or more.",
    .action =
        "Size grids from the problem or as a multiple of the SM count; batch skinny GEMMs. Remedy "
        "full-grid.",
};

}  // namespace chokepoint::rules
