// cuda-graphs: capture the launches of the step in CUDA Graphs (torch.cuda.graphs, or
// torch.compile(mode="reduce-overhead")) and replay them.
//
// Replay: each run of launches with nothing in between that a graph cannot hold (a
// synchronization, a blocking copy, a DataLoader wait) becomes one graph:
// its first call becomes a cudaGraphLaunch, the host time and calls inside it disappear
// (the Python that issued them no longer runs), and its kernels start no closer than one
// graph node apart.
#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>

#include "analyses/op_shapes.h"
#include "analyses/whatif/remedies/common.h"
#include "base/plural.h"
#include "timeline/api_class.h"

namespace chokepoint::analyses::whatif {

namespace {

// Host time without any PyTorch op in it, this long, is the user's own Python between
// launches (logging, metrics, bookkeeping): a graph would skip it, so it ends a graph
// rather than being removed (torch.compile would break its graph there too).
constexpr TimeNs kUserCodeGapNs = 1'000'000;

bool user_code_before(const Context& c, size_t j) {
  return c.plain.gap[j] > kUserCodeGapNs && c.g.host[j].ops_in_gap == 0;
}

// An allocation or free in a step after the first, inside a captured run: a replay
// allocates nothing (the graph's private pool was allocated at capture), so it goes, and
// its wait with it (cudaFree synchronizes), rather than splitting the graph. On the H200
// the empty_cache pair (cudaMalloc/cudaFree every step) captured per length gained
// 1.95-2.11x where the remedy that kept them as splits read 1.24-2.03x.
bool allocation_in_a_step(const Context& c, size_t i) {
  return timeline::is_allocator(c.g.host[i].api) && c.g.host[i].window >= 1;
}

bool capturable(const Context& c, size_t i) {
  const HostEvent& e = c.g.host[i];
  if (c.plain.waits[i] || e.waits_for >= 0 || (e.flags & kInOptimizer)) return false;
  using timeline::ApiClass;
  return e.api == ApiClass::kLaunch || e.api == ApiClass::kMemset || e.api == ApiClass::kMemcpyAsync ||
         e.api == ApiClass::kGraphLaunch;
}

// How many different sets of GEMM shapes the recorded steps ran (from record_shapes; 0
// when no GEMM recorded its shapes): more than one and a graph per shape is needed.
size_t gemm_shape_sets(const Context& c) {
  std::vector<std::string> per_step(c.g.window_start.size());
  for (const GpuNode& n : c.g.gpu) {
    if (n.launch < 0) continue;
    const int32_t w = c.g.host[n.launch].window;
    const int32_t op = c.ix.op_row[n.row];
    if (w < 0 || static_cast<size_t>(w) >= per_step.size() || op < 0) continue;
    if (const auto sh = gemm_shape(c.tl, op)) per_step[w] += sh->text;
  }
  std::set<std::string> sets;
  for (auto& s : per_step) {
    if (!s.empty()) sets.insert(std::move(s));
  }
  return sets.size();
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
  int64_t graphs = 0, captured = 0, allocations = 0;
  TimeNs removed = 0;
  size_t i = 0;
  while (i < g.host.size()) {
    if (!capturable(c, i)) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    // One graph per step at most (a step is replayed from its graph each iteration).
    while (j < g.host.size() && (capturable(c, j) || allocation_in_a_step(c, j)) && g.host[j].gap_loader == 0 &&
           !user_code_before(c, j) && g.host[j].window == g.host[i].window) {
      ++j;
    }
    // A run ends at its last launch: allocations after it are not inside the capture.
    while (j > i + 1 && allocation_in_a_step(c, j - 1)) --j;
    if (j - i >= 2) {
      ++graphs;
      removed += p.dur[i] - kGraphLaunchNs;
      p.dur[i] = kGraphLaunchNs;
      ++captured;
      for (size_t k = i + 1; k < j; ++k) {
        removed += p.gap[k] + p.dur[k];
        p.gap[k] = 0;
        p.dur[k] = 0;
        if (allocation_in_a_step(c, k)) {
          p.waits[k] = 0;
          ++allocations;
          continue;
        }
        ++captured;
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
  std::vector<std::string> assumptions = {
      "Static shapes and no data-dependent Python inside the captured region (torch.compile's reduce-overhead "
      "mode checks this and falls back where it cannot capture).",
      "Synchronizations, blocking copies, DataLoader waits and stretches of Python without any PyTorch op (over "
      "1 ms: the program's own bookkeeping) stay outside the graphs: each splits the step into another graph. "
      "Allocations inside a captured run go: a replay takes its memory from the graph's pool.",
      "The optimizer step stays eager, as with torch.cuda.make_graphed_callables (capture it too with "
      "AdamW(capturable=True), or compile the whole step).",
      "Each captured kernel replays as a graph node 0.5 us after the previous one at the earliest (measured on "
      "the H200); the graph launch costs about one kernel launch."};
  if (const size_t sets = gemm_shape_sets(c); sets > 1) {
    assumptions.insert(assumptions.begin() + 1,
                       fmt::format("The {} recorded steps ran {} different sets of GEMM shapes (variable input "
                                   "sizes): capture one graph per shape, padding inputs to a few sizes "
                                   "(torch.compile's reduce-overhead mode records one per shape it meets).",
                                   g.window_start.size(), sets));
  }
  return finish(c, Remedy::kCudaGraphs, p,
                fmt::format("{} per step go into {:.1f} graph(s) per step; {} of host time per step inside them "
                            "(Python, dispatch, launch calls{}) no longer runs",
                            counted(static_cast<double>(captured) / steps, "launch", "launches"),
                            static_cast<double>(graphs) / steps, per_step_ms(c, removed),
                            allocations > 0 ? fmt::format(", {:.1f} cudaMalloc/cudaFree calls a step",
                                                          static_cast<double>(allocations) / steps)
                                            : ""),
                std::move(assumptions));
}

}  // namespace chokepoint::analyses::whatif
