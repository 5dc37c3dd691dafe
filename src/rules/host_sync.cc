// host-sync: synchronizing calls (.item(), .cpu(), torch.cuda.synchronize()) drain the
// GPU's queue every step, so host work that could overlap GPU work runs alone.
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// GPU idle caused by draining syncs worth reporting (5% of the step, like Nsight
// Systems' cuda_api_sync rule reports any synchronizing API in the hot loop).
constexpr double kMinSharePct = 5.0;
// Removing them must be worth it: a replay without the syncs (the defer-syncs what-if)
// that gains less than this says the host's own work, not the syncs, sets the pace (the
// sync_host_bound fixture and the bert_item pair: 1.07x and 1.04x measured).
constexpr double kMinGain = 1.05;

// What the user wrote, from the ATen op that made the synchronizing call.
std::string culprit(const analyses::SyncSite& s) {
  if (s.op == "aten::_local_scalar_dense" || s.op == "aten::item")
    return ".item() (or float()/int()/bool() on a CUDA tensor, or Python `if` on one)";
  if (s.op == "aten::nonzero" || s.op == "aten::masked_select" || s.op == "aten::unique")
    return s.op + " (data-dependent output size)";
  if (s.op == "aten::copy_" || s.op == "aten::to" || s.op == "aten::_to_copy")
    return ".cpu() / .to(\"cpu\") / .numpy()";
  if (s.op.empty()) return s.api + " called directly (torch.cuda.synchronize() or an extension)";
  return s.op;
}
}  // namespace

std::optional<Finding> host_sync(const TraceEvidence& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const auto& api = c.a.api;
  const TimeNs idle = t.idle_of(IdleCause::kSync);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct || api.syncs == 0) return std::nullopt;
  const std::optional<double> gain = what_if(c, analyses::whatif::Remedy::kDeferSyncs);
  if (gain && *gain < kMinGain) return std::nullopt;
  // Without a replay: idle[kSync] is what removing the syncs saves (host work the floor).
  const double speedup = gain.value_or(analyses::projected_speedup(t.duration, idle, 0));
  const double per_step = c.a.per_step(api.syncs);
  const auto& top = api.sync_sites.front();

  Finding f = new_finding(share, speedup);
  f.remedies = {"defer-syncs"};
  f.title = fmt::format("{:.0f} synchronizations per step drain the GPU queue ({:.0f}% of the step idle)", per_step,
                        share);
  f.detail = fmt::format(
      "Each step the host blocks {:.0f} times waiting for the GPU ({:.2f} ms per step), so the "
      "GPU runs dry and then waits while the host prepares and launches the next work. Most of "
      "it comes from {} ({} x {}).",
      per_step, c.a.ms_per_step(api.sync_blocked_ns), culprit(top), top.count, top.api);
  if (t.sync_relabelled > 0) {
    f.detail += fmt::format(
        " Removing them hides only part of the gap: the host's own work ({:.1f} ms per step) "
        "would still be the limit, so {:.1f} ms per step is counted as host work instead.",
        c.a.ms_per_step(t.host_critical), c.a.ms_per_step(t.sync_relabelled));
  }
  f.evidence = {evidence("gpu_idle_after_sync_pct", share, "%", kMinSharePct), evidence("syncs_per_step", per_step, ""),
                evidence("blocked_ms_per_step", c.a.ms_per_step(api.sync_blocked_ns), "ms"),
                evidence("host_critical_ms_per_step", c.a.ms_per_step(t.host_critical), "ms")};
  f.recommendation =
      "Keep values on the GPU inside the loop: accumulate metrics as tensors and call .item() "
      "or .cpu() once every N steps, replace Python `if` on CUDA values with torch.where, avoid "
      "print(tensor) and data-dependent shapes (nonzero, boolean masks). Find each call with "
      "torch.cuda.set_sync_debug_mode(\"warn\").";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain host-sync` prints.
extern const Rule host_sync_rule = {
    .id = "host-sync",
    .category = Category::kSync,
    .trace = host_sync,
    .stacks = host_sync_stacks,
    .meaning =
        "Synchronizing calls (.item(), .cpu(), torch.cuda.synchronize(), a print of a CUDA "
        "tensor) drain the GPU's queue every step, so host work that could overlap GPU work runs "
        "alone.",
    .detection =
        "From a trace: GPU idle after synchronizing API calls, 5% of the step or more, when "
        "replaying the step without them gains enough. From Python stacks: the line the thread "
        "waits on is a sync.",
    .action =
        "Keep per-step values on the GPU and read them every N steps; drop synchronize() from the "
        "loop; torch.cuda.set_sync_debug_mode(\"warn\") shows each sync. Remedy defer-syncs.",
};

}  // namespace chokepoint::rules
