// host-swapping: the host pages memory to swap, or tasks stall waiting for memory (PSI).
// A DataLoader that touches swapped-out pages waits on the disk for every batch.
#include <algorithm>

#include <fmt/format.h>

#include "rules/checks/checks.h"
#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// 256 pages/s is 1 MiB/s of 4 KiB pages: more than the kernel's background trimming of
// cold pages, which a job in steady state should not cause at all.
constexpr double kMinSwapPagesPerS = 256.0;
// PSI memory "some" avg10 of 10%: some task lost a tenth of its wall time to reclaim or
// swap-in (Documentation/accounting/psi.rst; oomd and systemd-oomd act from 10-60%).
constexpr double kMinPsiMemSomePct = 10.0;
// Swapping in a twentieth of the ticks is already visible as step-time jitter.
constexpr double kMinShare = 0.05;
}  // namespace

std::optional<Finding> host_swapping(const SampleEvidence& c) {
  const samples::Series* in = host_series(c, MetricId::kHostSwapInPagesPerS);
  const samples::Series* out = host_series(c, MetricId::kHostSwapOutPagesPerS);
  const samples::Series* psi = analyses::sampled::psi_series(c.rec.samples, MetricId::kHostPsiMemorySomePct,
                                                             MetricId::kHostPsiMemorySomeAvg10);
  const int64_t age = max_age_ns(c.la);
  const std::optional<double> share = tick_share(work_ticks(c.la), [&](int64_t t) -> std::optional<bool> {
    const auto i = analyses::sampled::held(in, t, age), o = analyses::sampled::held(out, t, age);
    const auto p = analyses::sampled::held(psi, t, age);
    if (!i && !o && !p) return std::nullopt;
    return i.value_or(0) >= kMinSwapPagesPerS || o.value_or(0) >= kMinSwapPagesPerS ||
           p.value_or(0) >= kMinPsiMemSomePct;
  });
  if (!share || *share < kMinShare) return std::nullopt;
  const auto& h = c.la.host;
  const double in95 = h.swap_in_per_s ? h.swap_in_per_s->p95 : 0, out95 = h.swap_out_per_s ? h.swap_out_per_s->p95 : 0;
  Finding f = new_finding(100 * *share, std::nullopt);
  f.title = fmt::format("Host under memory pressure in {:.0f}% of the run (swap in {:.0f} / out {:.0f} pages/s at p95)",
                        100 * *share, in95, out95);
  f.detail = fmt::format("Swap or memory stalls in {:.0f}% of the {:.1f} s run{}{}.", 100 * *share, c.la.duration_s,
                         h.psi_mem_some ? fmt::format("; PSI memory some {:.1f}% on average, {:.1f}% peak",
                                                      h.psi_mem_some->mean, h.psi_mem_some->max)
                                        : "",
                         h.mem_available_bytes && h.mem_total_bytes
                             ? fmt::format("; as little as {:.1f} of {:.1f} GiB available",
                                           h.mem_available_bytes->min / (1 << 30), *h.mem_total_bytes / (1 << 30))
                             : "");
  f.detail += " Pages the job needs come back from disk, stalling the data pipeline and the training loop.";
  f.evidence = {evidence("pressure_ticks_pct", 100 * *share, "%", 100 * kMinShare),
                evidence("swap_in_p95_pages_per_s", in95, "pages/s"),
                evidence("swap_out_p95_pages_per_s", out95, "pages/s")};
  if (h.psi_mem_some) f.evidence.push_back(evidence("psi_memory_some_mean_pct", h.psi_mem_some->mean, "%"));
  if (h.mem_available_bytes)
    f.evidence.push_back(evidence("mem_available_min_gib", h.mem_available_bytes->min / (1 << 30), "GiB"));
  f.recommendation =
      "Use less host memory: fewer DataLoader workers or a smaller prefetch_factor (each worker holds "
      "its batches), keep the dataset in numpy arrays or a memory-mapped file instead of Python lists "
      "(workers' refcount writes copy every touched page), load shards lazily; stop other jobs on the "
      "node or add RAM. Check with `free -h` and `vmstat 1`.";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain host-swapping` prints.
extern const Rule host_swapping_rule = {
    .id = "host-swapping",
    .category = Category::kIo,
    .samples = host_swapping,
    .machine = checks::host_swapping,
    .meaning =
        "The host pages memory to swap, or tasks stall waiting for memory: a DataLoader that "
        "touches swapped-out pages waits on the disk for every batch.",
    .detection =
        "From live samples: swap-in/out of 256 pages/s or more, or PSI memory pressure of 10%; "
        "doctor: swap used since boot.",
    .action =
        "Use less host memory (fewer or lighter workers, no dataset copies per worker, shared "
        "memory) or add RAM.",
};

}  // namespace chokepoint::rules
