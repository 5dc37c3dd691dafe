// cuda-graphs: capture the launches of the step in CUDA Graphs (torch.cuda.graphs, or
// torch.compile(mode="reduce-overhead")) and replay them.
//
// Replay: each run of launches with nothing in between that a graph cannot hold (a
// synchronization, a blocking copy, an allocation, a DataLoader wait) becomes one graph:
// its first call becomes a cudaGraphLaunch, the host time and calls inside it disappear
// (the Python that issued them no longer runs), and its kernels start no closer than one
// graph node apart.
#include <algorithm>

#include <fmt/format.h>

#include "analyses/whatif/remedies/common.h"
#include "base/plural.h"

namespace chokepoint::analyses::whatif {

namespace {

// Host time without any PyTorch op in it, this long, is the user's own Python between
// launches (logging, metrics, bookkeeping): a graph would skip it, so it ends a graph
// rather than being removed (torch.compile would break its graph there too).
constexpr TimeNs kUserCodeGapNs = 1'000'000;

bool user_code_before(const Context& c, size_t j) {
  return c.plain.gap[j] > kUserCodeGapNs && c.g.host[j].ops_in_gap == 0;
}

bool capturable(const Context& c, size_t i) {
  const HostEvent& e = c.g.host[i];
  if (c.plain.waits[i] || e.waits_for >= 0 || (e.flags & kInOptimizer)) return false;
  using timeline::ApiClass;
  return e.api == ApiClass::kLaunch || e.api == ApiClass::kMemset || e.api == ApiClass::kMemcpyAsync ||
         e.api == ApiClass::kGraphLaunch;
}

}  // namespace

bool replays_cuda_graphs(const Context& c) {
  return std::any_of(c.g.host.begin(), c.g.host.end(),
                     [](const HostEvent& e) { return e.api == timeline::ApiClass::kGraphLaunch; });
}

std::optional<Estimate> estimate_cuda_graphs(const Context& c) {
  using namespace remedy;
  const auto& g = c.g;
  // The job already replays CUDA graphs: no advice to capture what is captured; what
  // launches outside them shows as launch overhead.
  if (replays_cuda_graphs(c)) return std::nullopt;
  Plan p = c.plain;
  std::vector<int32_t> graph_of(g.host.size(), -1);  // first event of the run an event joined
  int64_t graphs = 0, captured = 0;
  TimeNs removed = 0;
  size_t i = 0;
  while (i < g.host.size()) {
    if (!capturable(c, i)) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    // One graph per step at most (a step is replayed from its graph each iteration).
    while (j < g.host.size() && capturable(c, j) && g.host[j].gap_loader == 0 && !user_code_before(c, j) &&
           g.host[j].window == g.host[i].window) {
      ++j;
    }
    if (j - i >= 2) {
      ++graphs;
      captured += static_cast<int64_t>(j - i);
      removed += p.dur[i] - kGraphLaunchNs;
      p.dur[i] = kGraphLaunchNs;
      for (size_t k = i + 1; k < j; ++k) {
        removed += p.gap[k] + p.dur[k];
        p.gap[k] = 0;
        p.dur[k] = 0;
        graph_of[k] = static_cast<int32_t>(i);
      }
      graph_of[i] = static_cast<int32_t>(i);
    }
    i = j;
  }
  if (graphs == 0) return std::nullopt;
  for (size_t k = 0; k < g.gpu.size(); ++k) {
    const int32_t l = g.gpu[k].launch;
    if (l < 0 || graph_of[l] < 0) continue;
    p.node_launch[k] = graph_of[l];
    p.node_spacing[k] = kGraphNodeNs;
  }
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  return finish(
      c, Remedy::kCudaGraphs, p,
      fmt::format("{} per step go into {:.1f} graph(s) per step; {} of host time per step inside them "
                  "(Python, dispatch, launch calls) no longer runs",
                  counted(static_cast<double>(captured) / steps, "launch", "launches"),
                  static_cast<double>(graphs) / steps, per_step_ms(c, removed)),
      {"Static shapes and no data-dependent Python inside the captured region (torch.compile's reduce-overhead "
       "mode checks this and falls back where it cannot capture).",
       "Synchronizations, blocking copies, allocations, DataLoader waits and stretches of Python without any "
       "PyTorch op (over 1 ms: the program's own bookkeeping) stay outside the graphs: each splits the step into "
       "another graph.",
       "The optimizer step stays eager, as with torch.cuda.make_graphed_callables (capture it too with "
       "AdamW(capturable=True), or compile the whole step).",
       "Each captured kernel replays as a graph node 0.5 us after the previous one at the earliest (measured on "
       "the H200); the graph launch costs about one kernel launch."});
}

}  // namespace chokepoint::analyses::whatif
