// torch-compile: torch.compile fuses chains of elementwise, normalization and reduction
// kernels into one generated kernel each.
//
// Replay: on each stream, a run of such kernels with nothing else between them (outside
// the optimizer, inside one step) becomes one kernel as long as its longest member (each
// member reads and writes tensors of about the same size: one fused pass does what the
// longest did); the calls that launched the others disappear, with the host time before
// them. GEMMs, attention and everything else are unchanged.
#include <fmt/format.h>

#include "analyses/whatif/remedies/common.h"
#include "base/plural.h"

namespace chokepoint::analyses::whatif {

namespace {
bool fusible(const NodeInfo& n) {
  return n.kernel && !n.in_optimizer &&
         (n.kclass == KernelClass::kElementwise || n.kclass == KernelClass::kNormalization ||
          n.kclass == KernelClass::kReduction);
}

// The end of the chain of fusible kernels that starts at lane[i]: the kernels after it on
// its stream, launched in the same step.
size_t chain_end(const Context& c, const std::vector<int32_t>& lane, size_t i) {
  const auto& g = c.g;
  const int32_t window = g.gpu[lane[i]].launch >= 0 ? g.host[g.gpu[lane[i]].launch].window : -1;
  size_t j = i + 1;
  while (j < lane.size() && fusible(c.nodes[lane[j]]) &&
         (g.gpu[lane[j]].launch < 0 || g.host[g.gpu[lane[j]].launch].window == window)) {
    ++j;
  }
  return j;
}

struct Fused {
  int64_t chains = 0, kernels = 0, any = 0;
  TimeNs before = 0, after = 0;
};

// lane[i, j) becomes one kernel as long as its longest; the launches of the others go
// (with their host time) when they launched nothing else.
void fuse_chain(const Context& c, const std::vector<int32_t>& lane, size_t i, size_t j,
                std::vector<int32_t>& launches_left, Plan& p, Fused& f) {
  const auto& g = c.g;
  TimeNs longest = 0, sum = 0;
  for (size_t k = i; k < j; ++k) {
    longest = std::max(longest, g.gpu[lane[k]].dur);
    sum += g.gpu[lane[k]].dur;
  }
  p.node_dur[lane[i]] = longest;
  for (size_t k = i + 1; k < j; ++k) {
    p.node_removed[lane[k]] = 1;
    const int32_t l = g.gpu[lane[k]].launch;
    if (l >= 0 && --launches_left[l] == 0 && !p.waits[l]) {
      p.gap[l] = 0;
      p.dur[l] = 0;
    }
  }
  ++f.any;
  // Counted for the report over the analyzed steps' own work: the backlog queued before the
  // trace (fused all the same) is the step before them (healthy_bf16: 80 kernels "per step"
  // of 61).
  if (g.gpu[lane[i]].backlog) return;
  ++f.chains;
  f.kernels += static_cast<int64_t>(j - i);
  f.before += sum;
  f.after += longest;
}

}  // namespace

bool runs_torch_compile(const timeline::Timeline& tl) {
  // torch.compile's own ranges: "Torch-Compiled Region: 0/0" around each compiled frame and
  // "CompiledFunction" for its autograd function (mlp_compile's fixed trace: 4 each).
  const auto& r = tl.cpu_ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    const std::string_view n = tl.strings.view(r.name[i]);
    if (n.rfind("Torch-Compiled Region", 0) == 0 || n == "CompiledFunction") return true;
  }
  return false;
}

std::optional<Estimate> estimate_compile_fusion(const Context& c) {
  // Already compiled: no advice to compile. What is left unfused runs outside the compiled
  // frames (graph breaks) or is what Inductor keeps apart (issue 43: mlp_compile's fixed
  // trace was told "model = torch.compile(model)", est. 1.04x).
  if (c.torch_compiled) return std::nullopt;
  const auto& g = c.g;
  Plan p = c.plain;
  Fused f;
  std::vector<int32_t> launches_left(g.host.size(), 0);
  for (const auto& n : g.gpu) {
    if (n.launch >= 0) ++launches_left[n.launch];
  }
  for (const auto& lane : g.lanes) {
    for (size_t i = 0; i < lane.size();) {
      if (!fusible(c.nodes[lane[i]])) {
        ++i;
        continue;
      }
      const size_t j = chain_end(c, lane, i);
      if (j - i >= 2) fuse_chain(c, lane, i, j, launches_left, p, f);
      i = j;
    }
  }
  if (f.any == 0) return std::nullopt;
  const int64_t chains = f.chains, fused = f.kernels;
  const TimeNs before = f.before, after = f.after;
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  std::optional<Estimate> e = finish(
      c, Remedy::kCompileFusion, p,
      fmt::format("{} per step of {} become one kernel "
                  "each: {} per step instead of {}, and their extra launches go",
                  counted(chains / steps, "chain", "chains"),
                  counted(fused / steps, "elementwise/normalization kernel", "elementwise/normalization kernels"),
                  remedy::per_step_ms(c, after), remedy::per_step_ms(c, before)),
      {"A fused chain costs about its longest kernel (one pass over tensors of the same size).",
       "Fusion follows the order kernels ran on each stream; torch.compile fuses by data flow and can "
       "do more (GEMM epilogues) or less (graph breaks).",
       "The first steps compile (seconds to minutes); shapes that change recompile."});
  if (e) {
    e->fused_chains = Estimate::FusedChains{static_cast<double>(chains) / steps, static_cast<double>(fused) / steps,
                                            static_cast<double>(before) / 1e6 / steps,
                                            static_cast<double>(after) / 1e6 / steps};
  }
  return e;
}

}  // namespace chokepoint::analyses::whatif
