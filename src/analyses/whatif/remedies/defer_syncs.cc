// defer-syncs: keep per-step values on the GPU (loss, accuracy, norms) and read them
// every N steps; no torch.cuda.synchronize() in the loop.
//
// Replay: synchronizing calls no longer wait, and the small device-to-host copies that
// carried the values to Python (.item(), .cpu(), .tolist()) do not happen. Calls made
// by ops whose output size depends on the data (nonzero, masked_select, unique) stay:
// they need a different fix. The Python that used the values still runs.
#include <fmt/format.h>

#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace {
// A device-to-host copy this small is a value for the host, not data.
constexpr double kValueBytes = 64 * 1024;

bool data_dependent(std::string_view op) {
  for (std::string_view p : {"nonzero", "masked_select", "unique", "repeat_interleave", "index_put"}) {
    if (op.find(p) != std::string_view::npos) return true;
  }
  return false;
}
}  // namespace

std::optional<Estimate> estimate_defer_syncs(const Context& c) {
  using namespace remedy;
  const auto& g = c.g;
  const auto& ops = c.tl.gpu_ops;
  Plan p = c.plain;
  int64_t syncs = 0, reads = 0, kept = 0;
  for (size_t i = 0; i < g.host.size(); ++i) {
    const HostEvent& e = g.host[i];
    const int32_t op = c.ix.api_op_row[e.rc_row];
    const std::string_view op_name = op >= 0 ? c.tl.strings.view(c.tl.cpu_ranges.name[op]) : "";
    if (e.api == timeline::ApiClass::kSync) {
      if (data_dependent(op_name)) {
        ++kept;
        continue;
      }
      p.waits[i] = 0;
      p.dur[i] = std::min<TimeNs>(p.dur[i], 1'000);
      ++syncs;
    } else if (e.api == timeline::ApiClass::kMemcpyAsync && e.waits_for >= 0 && !data_dependent(op_name)) {
      const uint32_t row = g.gpu[e.waits_for].row;
      if (ops.copy_kind[row] == timeline::CopyKind::kDtoH && c.nodes[e.waits_for].bytes <= kValueBytes) {
        p.waits[i] = 0;
        p.dur[i] = 0;
        p.node_removed[e.waits_for] = 1;
        ++reads;
      }
    }
  }
  if (syncs + reads == 0) return std::nullopt;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  std::vector<std::string> assumptions = {
      "Values the loop reads every step (loss, accuracy, norms) stay on the GPU and are read every N steps; "
      "explicit torch.cuda.synchronize() calls go (or move to where timing is logged).",
      "The Python that used the values still runs: only the waiting goes."};
  if (kept > 0) {
    assumptions.push_back(
        fmt::format("{:.0f} synchronizations per step come from ops with data-dependent output "
                    "sizes (nonzero, masked_select ...): kept.",
                    kept / steps));
  }
  if (c.ix.api_op_row.empty() || c.tl.cpu_ranges.size() == 0) {
    assumptions.push_back("The trace has no PyTorch ops, so every synchronization is taken as removable.");
  }
  return finish(c, Remedy::kDeferSyncs, p,
                fmt::format("{:.0f} synchronizations and {:.0f} value reads per step no longer wait for the GPU",
                            syncs / steps, reads / steps),
                std::move(assumptions));
}

}  // namespace chokepoint::analyses::whatif
