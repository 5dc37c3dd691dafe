// pinned-copies: host<->device copies from pinned memory, issued with non_blocking=True.
//
// Replay: each copy from or to pageable memory runs at the pinned rate of this machine's
// link; a host-to-device copy no longer holds the host (it was staged through a driver
// buffer while the Python thread waited), so the host goes on while it runs. The kernels
// that read the copied data still wait for it (same stream).
#include <fmt/format.h>

#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace remedy {
namespace {
// A copy call that returns at once: cudaMemcpyAsync from pinned memory (~5 us on the H200).
constexpr TimeNs kAsyncCopyCallNs = 5'000;
// Copy engine start-up per copy (bench: a 4 KiB pinned copy takes ~2 us).
constexpr TimeNs kCopySetupNs = 2'000;
// Device-to-host copies this small are values read by the host (.item()): defer-syncs.
constexpr double kSmallReadBytes = 1 << 20;
}  // namespace
}  // namespace remedy

namespace remedy {

PinnedStats apply_pinned_copies(const Context& c, Plan& p) {
  PinnedStats st;
  if (!c.ceilings.pcie_gbps || *c.ceilings.pcie_gbps <= 0) return st;
  const auto& g = c.g;
  const auto& ops = c.tl.gpu_ops;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const uint32_t row = g.gpu[k].row;
    if (ops.kind[row] != timeline::GpuOpKind::kMemcpy) continue;
    const auto kind = ops.copy_kind[row];
    const bool h2d = kind == timeline::CopyKind::kHtoD && ops.src_kind[row] == timeline::MemKind::kPageable;
    const bool d2h = kind == timeline::CopyKind::kDtoH && ops.dst_kind[row] == timeline::MemKind::kPageable &&
                     c.nodes[k].bytes >= kSmallReadBytes;
    if (!h2d && !d2h) continue;
    const TimeNs t = std::min(g.gpu[k].dur, kCopySetupNs + ns(c.nodes[k].bytes / *c.ceilings.pcie_gbps));
    st.before += g.gpu[k].dur;
    st.after += t;
    st.bytes += c.nodes[k].bytes;
    ++st.copies;
    p.node_dur[k] = t;
    const int32_t l = g.gpu[k].launch;
    if (h2d && l >= 0 && (g.host[l].flags & kBlockingCopy)) {
      p.waits[l] = 0;
      p.dur[l] = kAsyncCopyCallNs;
    }
    // A blocking .to() also synchronizes the stream after its copy; non_blocking does not.
    // The sync belongs to the copy's ATen op; without ops (a CUPTI trace), it is the call
    // right after the copy.
    if (h2d && l >= 0) {
      const int32_t op = c.ix.api_op_row[g.host[l].rc_row];
      for (size_t j = static_cast<size_t>(l) + 1; j < g.host.size() && j <= static_cast<size_t>(l) + (op >= 0 ? 4 : 1);
           ++j) {
        const bool same = op >= 0 ? c.ix.api_op_row[g.host[j].rc_row] == op : c.ix.api_op_row[g.host[j].rc_row] < 0;
        if (g.host[j].api == timeline::ApiClass::kSync && same) {
          p.waits[j] = 0;
          p.dur[j] = std::min<TimeNs>(p.dur[j], 1'000);
        }
      }
    }
  }
  return st;
}

}  // namespace remedy

std::optional<Estimate> estimate_pinned_copies(const Context& c) {
  using namespace remedy;
  Plan p = c.plain;
  const PinnedStats st = apply_pinned_copies(c, p);
  const int64_t copies = st.copies;
  const double bytes = st.bytes;
  const TimeNs before = st.before, after = st.after;
  const auto& g = c.g;
  if (copies == 0) return std::nullopt;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  return finish(c, Remedy::kPinnedCopies, p,
                fmt::format("{:.0f} pageable copies per step ({:.1f} MB) take {} instead of {} and no longer hold "
                            "the Python thread",
                            copies / steps, bytes / steps / 1e6, per_step_ms(c, after), per_step_ms(c, before)),
                {fmt::format("Copies run at this machine's pinned host<->device rate, {:.1f} GB/s ({}).",
                             *c.ceilings.pcie_gbps, c.ceilings.source),
                 "The host buffers are pinned once (tensor.pin_memory() on a reused buffer, or DataLoader's "
                 "pin_memory thread), not before every copy.",
                 "Kernels that read the copied data still wait for it: overlap needs the next batch copied on a "
                 "side stream."});
}

}  // namespace chokepoint::analyses::whatif
