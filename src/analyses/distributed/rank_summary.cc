#include "analyses/distributed/rank_summary.h"

#include <algorithm>
#include <map>

#include "analyses/intervals.h"

namespace chokepoint::analyses::distributed {

const char* collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kSendRecv: return "send_recv";
    case CollectiveKind::kBarrier: return "barrier";
    case CollectiveKind::kOther: break;
  }
  return "other";
}

namespace {

// The collective a name spells after its backend prefix, in NCCL's CamelCase
// (AllReduce) or torch.distributed's snake_case (all_reduce, allreduce).
std::optional<CollectiveKind> kind_in(std::string_view s) {
  auto has = [&](std::string_view a, std::string_view b = {}, std::string_view c = {}) {
    return s.find(a) != std::string_view::npos || (!b.empty() && s.find(b) != std::string_view::npos) ||
           (!c.empty() && s.find(c) != std::string_view::npos);
  };
  if (has("AllReduce", "all_reduce", "allreduce")) return CollectiveKind::kAllReduce;
  if (has("ReduceScatter", "reduce_scatter", "reducescatter")) return CollectiveKind::kReduceScatter;
  if (has("AllGather", "all_gather", "allgather")) return CollectiveKind::kAllGather;
  if (has("AllToAll", "all_to_all", "alltoall")) return CollectiveKind::kAllToAll;
  if (has("Broadcast", "broadcast")) return CollectiveKind::kBroadcast;
  if (has("SendRecv", "Send", "Recv")) return CollectiveKind::kSendRecv;
  if (has("send", "recv")) return CollectiveKind::kSendRecv;
  if (has("barrier")) return CollectiveKind::kBarrier;
  if (has("Reduce", "reduce")) return CollectiveKind::kReduce;
  return std::nullopt;
}

}  // namespace

std::optional<CollectiveKind> collective_of_kernel(std::string_view name) {
  if (!name.starts_with("nccl")) return std::nullopt;
  // ncclDevKernel_AllReduce_Sum_f32_RING_LL(...), ncclKernel_AllGather_RING_LL_Sum_int8_t(...)
  const size_t paren = name.find('(');
  auto k = kind_in(name.substr(0, paren));
  return k ? k : std::optional<CollectiveKind>(CollectiveKind::kOther);
}

std::optional<CollectiveKind> collective_of_op(std::string_view name) {
  if (!name.starts_with("gloo:") && !name.starts_with("nccl:") && !name.starts_with("mpi:") &&
      !name.starts_with("ucc:")) {
    return std::nullopt;
  }
  return kind_in(name.substr(name.find(':') + 1));
}

double bus_factor(CollectiveKind k, int n) {
  if (n <= 1) return 1;
  const double d = static_cast<double>(n);
  switch (k) {
    case CollectiveKind::kAllReduce: return 2 * (d - 1) / d;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll: return (d - 1) / d;
    default: return 1;
  }
}

namespace {

// The step number of the window containing t, -1 outside all.
int64_t step_at(const StepWindows& w, TimeNs t) {
  auto it = std::upper_bound(w.steps.begin(), w.steps.end(), t,
                             [](TimeNs x, const StepWindow& s) { return x < s.start; });
  if (it == w.steps.begin()) return -1;
  --it;
  return t < it->end ? it->number : -1;
}

// Collectives on the GPU (NCCL kernels) of the rank's primary device; without any, its
// host-side collective ops (gloo). Each with the part no compute kernel overlapped.
std::vector<Collective> collectives_of(const timeline::Timeline& tl, const Analysis& a) {
  std::vector<Collective> out;
  const auto& g = tl.gpu_ops;
  Intervals compute;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] != timeline::GpuOpKind::kKernel) continue;
    const std::string_view name = tl.strings.view(g.name[i]);
    if (auto k = collective_of_kernel(name)) {
      if (a.primary_device >= 0 && g.device[i] != a.primary_device) continue;
      Collective c;
      c.kind = *k;
      c.bytes = std::max<int64_t>(0, g.bytes[i]);
      c.start = g.start[i];
      c.end = g.end[i];
      out.push_back(c);
    } else if (a.primary_device < 0 || g.device[i] == a.primary_device) {
      compute.add(g.start[i], g.end[i]);
    }
  }
  if (out.empty()) {
    const auto& c = tl.cpu_ranges;
    for (size_t i = 0; i < c.size(); ++i) {
      if (auto k = collective_of_op(tl.strings.view(c.name[i]))) {
        Collective x;
        x.kind = *k;
        x.on_gpu = false;
        x.start = c.start[i];
        x.end = c.end[i];
        out.push_back(x);
      }
    }
  }
  compute.build();
  std::sort(out.begin(), out.end(), [](const Collective& x, const Collective& y) { return x.start < y.start; });
  std::map<int64_t, int32_t> per_step;
  for (Collective& c : out) {
    c.exposed = (c.end - c.start) - compute.overlap(c.start, c.end);
    c.step = step_at(a.windows, c.start);
    if (c.step >= 0) c.in_step = per_step[c.step]++;
  }
  return out;
}

}  // namespace

RankSummary summarize_rank(const timeline::Timeline& tl, const Analysis& a) {
  RankSummary s;
  for (const auto& src : tl.sources) {
    if (s.path.empty()) s.path = src.path;
    if (src.rank >= 0 && s.rank < 0) {
      s.rank = src.rank;
      s.world_size = src.world_size;
      s.backend = src.backend;
    }
  }
  if (a.primary_device >= 0 && static_cast<size_t>(a.primary_device) < tl.devices.size())
    s.device = tl.devices[static_cast<size_t>(a.primary_device)].name;
  s.nvlink_gen = a.ceilings.nvlink_gen;
  s.events = static_cast<int64_t>(tl.event_count());
  std::vector<double> ms;
  if (!a.windows.whole_trace) {
    for (const auto& w : a.windows.steps) {
      s.step_numbers.push_back(w.number);
      s.step_start.push_back(w.start);
      s.step_end.push_back(w.end);
      ms.push_back(static_cast<double>(w.duration()) / 1e6);
    }
  }
  for (double x : ms) s.step_ms += x / static_cast<double>(ms.size());
  if (ms.empty()) s.step_ms = s.step_p50_ms = a.ms_per_step(a.total().duration);
  if (!ms.empty()) {
    std::vector<double> v = ms;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    s.step_p50_ms = v[v.size() / 2];
  }
  const auto& t = a.total();
  for (int c = 0; c < kNumKernelClasses; ++c)
    s.busy_ms[static_cast<size_t>(c)] = a.ms_per_step(t.busy_by_class[static_cast<size_t>(c)]);
  for (int c = 0; c < kNumIdleCauses; ++c)
    s.idle_ms[static_cast<size_t>(c)] = a.ms_per_step(t.idle[static_cast<size_t>(c)]);
  s.compute_ms = a.ms_per_step(t.busy - t.busy_of(KernelClass::kCommunication) - t.busy_of(KernelClass::kCopy));
  s.collectives = collectives_of(tl, a);
  Intervals comm;
  for (const Collective& c : s.collectives) {
    if (c.step >= 0) comm.add(c.start, c.end);
  }
  comm.build();
  s.comm_ms = a.ms_per_step(comm.total());
  return s;
}

void shift_times(RankSummary& s, TimeNs delta) {
  for (auto& t : s.step_start) t += delta;
  for (auto& t : s.step_end) t += delta;
  for (auto& c : s.collectives) {
    c.start += delta;
    c.end += delta;
  }
}

}  // namespace chokepoint::analyses::distributed
