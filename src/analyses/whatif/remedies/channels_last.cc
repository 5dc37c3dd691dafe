// channels-last: model.to(memory_format=torch.channels_last) and channels_last inputs for
// a half-precision convnet.
//
// Replay: cuDNN's NCHW<->NHWC transposes around each convolution go, and ATen's NCHW
// kernels of batch norm and pooling run as their channels_last versions, at the memory
// roofline of their op's tensors (never slower than recorded). Without recorded shapes
// only the transposes go. Convolutions are unchanged (cuDNN already runs them on NHWC).
#include <fmt/format.h>
#include <map>

#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

std::optional<Estimate> estimate_channels_last(const Context& c) {
  using namespace remedy;
  const auto& g = c.g;
  Plan p = c.plain;
  int64_t transposes = 0, nchw = 0;
  TimeNs transpose_ns = 0, nchw_before = 0, nchw_after = 0;
  bool half = false;
  std::map<int32_t, std::vector<size_t>> by_op;  // NCHW kernels of each op
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const NodeInfo& n = c.nodes[k];
    half |= n.precision == Precision::kBf16 || n.precision == Precision::kFp16;
    if (n.layout_transpose) {
      p.node_removed[k] = 1;
      ++transposes;
      transpose_ns += g.gpu[k].dur;
      const int32_t l = g.gpu[k].launch;
      if (l >= 0 && !p.waits[l]) p.dur[l] = 0;
    } else if (n.nchw_kernel) {
      by_op[c.ix.op_row[g.gpu[k].row]].push_back(k);
    }
  }
  for (const auto& [op, nodes] : by_op) {
    TimeNs sum = 0;
    for (size_t k : nodes) sum += g.gpu[k].dur;
    const TimeNs roof = op >= 0 ? hbm_time(c, c.nodes[nodes.front()].bytes) : 0;
    if (roof <= 0 || roof >= sum) continue;
    for (size_t k : nodes) {
      const TimeNs t = g.gpu[k].dur;
      const TimeNs after = std::max(kKernelFloorNs,
                                    ns(static_cast<double>(roof) * static_cast<double>(t) / static_cast<double>(sum)));
      p.node_dur[k] = std::min(t, after);
      ++nchw;
      nchw_before += t;
      nchw_after += p.node_dur[k];
    }
  }
  if (!half || (transposes == 0 && nchw == 0)) return std::nullopt;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  return finish(c, Remedy::kChannelsLast, p,
                fmt::format("{:.0f} layout transposes per step ({}) go; {:.0f} NCHW batch-norm/pooling kernels take "
                            "{} instead of {}",
                            transposes / steps, per_step_ms(c, transpose_ns), nchw / steps, per_step_ms(c, nchw_after),
                            per_step_ms(c, nchw_before)),
                {"The model and its inputs are channels_last (model.to(memory_format=torch.channels_last), "
                 "x.to(memory_format=torch.channels_last)); convolutions keep their time.",
                 "Batch norm and pooling in channels_last run at the HBM roofline of their tensors."});
}

}  // namespace chokepoint::analyses::whatif
