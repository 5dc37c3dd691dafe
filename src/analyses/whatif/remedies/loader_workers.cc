// dataloader-workers: enough DataLoader workers (with pin_memory and persistent workers)
// that the next batch is ready when the training loop asks for it.
//
// Replay: the main thread's wait inside DataLoader.__next__ shrinks to what taking a ready
// batch costs; the step then cannot be shorter than the time the workers need per batch
// divided by their number. That time: with loading in the main process (num_workers=0)
// it is the wait itself; with W workers that were all busy (a recording says so), W times
// the mean recorded step (the steps' time over their batches, long waits of a loader that
// delivers in bursts included: throughput, not a median). The worker count is capped by the CPUs the host has (less two: the
// main process and its pin-memory thread).
#include <cmath>

#include <fmt/format.h>

#include "analyses/index.h"
#include "analyses/whatif/remedies/common.h"
#include "base/plural.h"

namespace chokepoint::analyses::whatif {

namespace {
// What __next__ costs when the batch is ready: unpickling its handles and the
// pinned-memory hand-over (the fixed resnet pair: a median of ~1 ms for a 256-image batch
// with 14 workers on the H200; 0.2 ms for small batches).
constexpr TimeNs kReadyBatchNs = 150'000;
constexpr int kMaxWorkers = 32;
}  // namespace

std::optional<Estimate> estimate_loader_workers(const Context& c) {
  using namespace remedy;
  const auto& g = c.g;
  TimeNs wait = 0;
  for (size_t i = 0; i < g.host.size(); ++i) wait += c.plain.gap_loader[i];
  const double steps = static_cast<double>(std::max<int64_t>(1, g.steps));
  if (wait <= 0 || static_cast<double>(wait) / steps < 2 * kReadyBatchNs) return std::nullopt;

  // Was loading in the main process? (the annotation names the iterator)
  bool single_process = false;
  const auto& cpu = c.tl.cpu_ranges;
  for (size_t r = 0; r < cpu.size() && !single_process; ++r) {
    if (cpu.pid[r] != g.pid || cpu.category[r] != timeline::CpuCategory::kUserAnnotation) continue;
    const auto name = c.tl.strings.view(cpu.name[r]);
    single_process = is_dataloader_annotation(name) && name.find("SingleProcess") != std::string_view::npos;
  }
  Plan p = c.plain;
  for (size_t i = 0; i < g.host.size(); ++i) {
    const TimeNs w = p.gap_loader[i];
    if (w > 0) {
      p.gap[i] -= w - std::min(w, kReadyBatchNs);
      p.gap_loader[i] = std::min(w, kReadyBatchNs);
    }
  }
  // pin_memory=True with non_blocking copies comes with the workers.
  const remedy::PinnedStats pinned = remedy::apply_pinned_copies(c, p);
  const double fed_step = steady_step_ns(replay(g, p));
  const double step = steady_step_ns(c.plain_run);

  // Time the loading of one batch takes one worker.
  double batch_ns = 0;
  std::string who;
  if (single_process) {
    batch_ns = static_cast<double>(wait) / steps;
    who = "loading ran in the main process (num_workers=0)";
  } else if (c.loader_workers > 0) {
    batch_ns = c.loader_workers * step;
    who = counted(c.loader_workers, "worker", "workers") + (c.loader_workers == 1 ? " was busy" : " were all busy");
  }
  std::vector<std::string> assumptions;
  int workers = 0;
  double after_step = fed_step;
  if (batch_ns > 0) {
    const int needed = static_cast<int>(std::ceil(batch_ns / fed_step));
    const int cap = c.cpus > 2 ? std::min(c.cpus - 2, kMaxWorkers) : kMaxWorkers;
    workers = std::clamp(needed, 1, cap);
    after_step = std::max(fed_step, batch_ns / workers);
    assumptions.push_back(
        fmt::format("One batch costs a worker {:.1f} ms ({}); {}{} {} one every "
                    "{:.1f} ms.",
                    batch_ns / 1e6, who, counted(workers, "worker", "workers"),
                    c.cpus > 2 ? fmt::format(" (at most {} CPUs less 2)", c.cpus) : std::string(),
                    workers == 1 ? "delivers" : "deliver", batch_ns / workers / 1e6));
  } else {
    assumptions.push_back(
        "The trace does not say how many workers loaded the data: the estimate assumes enough "
        "workers, each with a free core, to have every batch ready (`chokepoint run` counts them "
        "and their CPU).");
  }
  assumptions.push_back(
      fmt::format("Taking a ready batch costs {:.1f} ms (measured with 14 workers on the H200).", kReadyBatchNs / 1e6));
  p.min_step = static_cast<TimeNs>(after_step);
  if (pinned.copies > 0) {
    assumptions.push_back(
        fmt::format("pin_memory=True and .to(device, non_blocking=True): {:.0f} pageable copies per "
                    "step become pinned ({}).",
                    pinned.copies / steps, c.ceilings.source));
  }
  Estimate e = finish(
      c, Remedy::kLoaderWorkers, p,
      fmt::format("the {:.2f} ms per step the loop waited in DataLoader.__next__ shrinks to {:.2f} ms{}",
                  static_cast<double>(wait) / steps / 1e6, kReadyBatchNs / 1e6,
                  workers > 0 ? fmt::format(" with {} workers", workers) : std::string()),
      std::move(assumptions));
  e.workers = workers;
  return e;
}

}  // namespace chokepoint::analyses::whatif
