// channels-last: model.to(memory_format=torch.channels_last) and channels_last inputs for
// a half-precision convnet.
//
// Replay: cuDNN's NCHW<->NHWC transposes around each convolution go, and ATen's NCHW
// kernels of batch norm and pooling run as their channels_last versions, at the memory
// roofline of their op's tensors (never slower than recorded). Convolutions are unchanged
// (cuDNN already runs them on NHWC).
//
// Without recorded shapes (a CUPTI trace: kernel names only) a batch-norm kernel's tensor
// is measured by the elementwise kernel that touches the same activation next to it: the
// ReLU or residual add that reads its output (forward), the ReLU backward that wrote its
// input gradient (backward). A vectorized ATen elementwise kernel streams its operands
// (std::array<char*, N> in its name: N tensors read or written) at the memory rate, so
// one tensor takes its time over N; the batch-norm kernel then moves the tensors of its
// op (forward x and y, one each for the statistics and the normalization kernel;
// backward dy, x and dx) at that rate. Pooling keeps its time there.
#include <fmt/format.h>

#include <charconv>
#include <map>

#include "analyses/whatif/remedies/common.h"

namespace chokepoint::analyses::whatif {

namespace {

bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// Which pass an NCHW batch-norm kernel belongs to, and how many activation-sized tensors
// its share of the op moves (see above); 0: not one whose tensor can be measured.
struct BnKernel {
  bool backward = false;
  int tensors = 0;
  bool starts_layer = false;  // the first kernel of its layer in issue order
};
BnKernel bn_kernel(std::string_view name) {
  if (contains(name, "batch_norm_collect_statistics")) return {false, 1, true};
  if (contains(name, "batch_norm_transform_input")) return {false, 1, false};
  if (contains(name, "batch_norm_backward_reduce")) return {true, 2, false};
  if (contains(name, "batch_norm_backward_elemt")) return {true, 3, true};
  if (contains(name, "batch_norm_backward")) return {true, 3, true};
  return {};
}

// The elementwise kernel measuring a batch-norm kernel's tensor lies at most this many
// kernels (of those above kLatencyBoundNs) away in its stream.
constexpr int kProbeReach = 4;

}  // namespace

int elementwise_operands(std::string_view kernel) {
  if (!contains(kernel, "vectorized_elementwise_kernel<")) return 0;
  constexpr std::string_view kArray = "std::array<char*, ";
  const size_t at = kernel.find(kArray);
  if (at == std::string_view::npos) return 0;
  int n = 0;
  const char* first = kernel.data() + at + kArray.size();
  const auto [end, ec] = std::from_chars(first, kernel.data() + kernel.size(), n);
  return ec == std::errc() && end != first ? n : 0;
}

namespace {

// The replay's change and what it counted.
struct Change {
  explicit Change(const Context& c) : c(c), p(c.plain) {}
  const Context& c;
  Plan p;
  int64_t transposes = 0, nchw = 0, by_neighbour = 0, unmeasured = 0;
  TimeNs transpose_ns = 0, nchw_before = 0, nchw_after = 0;

  void shorten(size_t k, TimeNs after) {
    const TimeNs t = c.g.gpu[k].dur;
    p.node_dur[k] = std::min(t, std::max(remedy::kKernelFloorNs, after));
    ++nchw;
    nchw_before += t;
    nchw_after += p.node_dur[k];
  }
  std::string_view name_of(size_t k) const { return c.tl.strings.view(c.tl.gpu_ops.name[c.g.gpu[k].row]); }
};

// The kernels of each op with recorded shapes share the op's time at the HBM roofline of
// its tensors, in proportion to their recorded times.
void shorten_by_op(Change& x, const std::map<int32_t, std::vector<size_t>>& by_op) {
  const auto& g = x.c.g;
  for (const auto& [op, nodes] : by_op) {
    TimeNs sum = 0;
    for (size_t k : nodes) sum += g.gpu[k].dur;
    const TimeNs roof = remedy::hbm_time(x.c, x.c.nodes[nodes.front()].bytes);
    if (roof <= 0 || roof >= sum) continue;
    for (size_t k : nodes) {
      x.shorten(k,
                remedy::ns(static_cast<double>(roof) * static_cast<double>(g.gpu[k].dur) / static_cast<double>(sum)));
    }
  }
}

// The time of one activation-sized tensor near batch-norm kernel k: from the first
// vectorized elementwise kernel after it (forward) or before it (backward) in its stream,
// within kProbeReach kernels and this layer; 0 when there is none.
TimeNs tensor_time_near(const Change& x, size_t k, const BnKernel& bn, const std::vector<int32_t>& pos) {
  const auto& g = x.c.g;
  const auto& lane = g.lanes[g.gpu[k].lane];
  const int step = bn.backward ? -1 : 1;
  int seen = 0;
  for (int32_t i = pos[k] + step; i >= 0 && i < static_cast<int32_t>(lane.size()) && seen < kProbeReach; i += step) {
    const auto j = static_cast<size_t>(lane[i]);
    if (!x.c.nodes[j].kernel || g.gpu[j].dur < remedy::kLatencyBoundNs) continue;
    ++seen;
    const std::string_view name = x.name_of(j);
    const BnKernel other = bn_kernel(name);
    if (other.tensors > 0 && other.starts_layer && other.backward == bn.backward) break;  // another layer's
    if (const int operands = elementwise_operands(name); operands > 0) return g.gpu[j].dur / operands;
  }
  return 0;
}

void shorten_by_neighbour(Change& x, const std::vector<size_t>& kernels) {
  const auto& g = x.c.g;
  std::vector<int32_t> pos(g.gpu.size(), -1);  // position in its lane
  for (const auto& lane : g.lanes) {
    for (size_t i = 0; i < lane.size(); ++i) pos[lane[i]] = static_cast<int32_t>(i);
  }
  for (size_t k : kernels) {
    if (g.gpu[k].launch < 0) continue;  // queued before the trace: not this step's
    const BnKernel bn = bn_kernel(x.name_of(k));
    const TimeNs per_tensor = bn.tensors > 0 ? tensor_time_near(x, k, bn, pos) : 0;
    if (per_tensor > 0) {
      ++x.by_neighbour;
      x.shorten(k, per_tensor * bn.tensors);
    } else if (bn.tensors > 0 || contains(x.name_of(k), "pool")) {
      ++x.unmeasured;  // (per-channel kernels, the running statistics' update, are not activation-sized)
    }
  }
}

}  // namespace

std::optional<Estimate> estimate_channels_last(const Context& c) {
  const auto& g = c.g;
  Change x(c);
  bool half = false;
  std::map<int32_t, std::vector<size_t>> by_op;  // NCHW kernels of each op with its bytes
  std::vector<size_t> no_bytes;                  // ... and those without
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const NodeInfo& n = c.nodes[k];
    half |= n.precision == Precision::kBf16 || n.precision == Precision::kFp16;
    if (n.layout_transpose) {
      x.p.node_removed[k] = 1;
      ++x.transposes;
      x.transpose_ns += g.gpu[k].dur;
      const int32_t l = g.gpu[k].launch;
      if (l >= 0 && !x.p.waits[l]) x.p.dur[l] = 0;
    } else if (n.nchw_kernel) {
      const int32_t op = c.ix.op_row[g.gpu[k].row];
      if (op >= 0 && n.bytes > 0) {
        by_op[op].push_back(k);
      } else {
        no_bytes.push_back(k);
      }
    }
  }
  shorten_by_op(x, by_op);
  // Where shapes were recorded, a kernel without them was launched outside the profiled
  // ops (queued before the trace began): kept as it was.
  if (by_op.empty()) shorten_by_neighbour(x, no_bytes);
  if (!half || (x.transposes == 0 && x.nchw == 0)) return std::nullopt;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  std::vector<std::string> assumptions{
      "The model and its inputs are channels_last (model.to(memory_format=torch.channels_last), "
      "x.to(memory_format=torch.channels_last)); convolutions keep their time.",
      "Batch norm and pooling in channels_last run at the HBM roofline of their tensors."};
  if (x.by_neighbour + x.unmeasured > 0) {
    assumptions.push_back(
        fmt::format("Without recorded shapes, {:.0f} batch-norm kernels per step are sized by the elementwise kernel "
                    "next to them on the same activation (its time per operand tensor); {:.0f} NCHW kernels without "
                    "one (pooling, a batch norm not followed by its activation) keep their time.",
                    static_cast<double>(x.by_neighbour) / steps, static_cast<double>(x.unmeasured) / steps));
  }
  return finish(c, Remedy::kChannelsLast, x.p,
                fmt::format("{:.0f} layout transposes per step ({}) go; {:.0f} NCHW batch-norm/pooling kernels take "
                            "{} instead of {}",
                            static_cast<double>(x.transposes) / steps, remedy::per_step_ms(c, x.transpose_ns),
                            static_cast<double>(x.nchw) / steps, remedy::per_step_ms(c, x.nchw_after),
                            remedy::per_step_ms(c, x.nchw_before)),
                std::move(assumptions));
}

}  // namespace chokepoint::analyses::whatif
