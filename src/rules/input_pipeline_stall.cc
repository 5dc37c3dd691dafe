// input-pipeline-stall: the GPU waits while the DataLoader produces the next batch.
// From a trace: idle time attributed to DataLoader.__next__. From live samples: ticks
// where the GPU is starved while a loader worker or the main process is CPU-saturated.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"
#include "rules/sampled/starvation.h"

namespace chokepoint::rules {
namespace {
// The PyTorch TensorBoard plugin recommends more DataLoader workers when data loading
// exceeds 5% of the step (docs/FORMATS.md "Prior art").
constexpr double kMinSharePct = 5.0;
// Never suggest fewer workers than this (one to load while one is consumed) or more
// than the usual core budget of a GPU's share of a node.
constexpr int kMinWorkers = 2, kMaxWorkers = 16;

// Without a CPU count, the workers of pytorch/examples imagenet (-j 4).
constexpr int kDefaultWorkers = 4;

std::optional<Finding> stall_on(const SampleEvidence& c, const analyses::sampled::GpuLive& g) {
  using sampled::StarveCause;
  const sampled::Starvation all = sampled::starvation(c, g);
  const sampled::Starvation::Cause& k = all.of(StarveCause::kInput);
  const double share = all.share(StarveCause::kInput);
  if (share < sampled::kMinStarvedShare) return std::nullopt;  // (starvation.h: loading evidence required)
  std::optional<double> speedup = all.speedup_without(StarveCause::kInput);
  struct {
    int64_t measured, stalled, by_workers, fed;
  } n{all.measured, k.ticks, k.by_workers, all.fed};
  const double fed_pct = n.fed > 0 ? all.fed_busy / static_cast<double>(n.fed) : 0;
  const double stalled_pct = k.busy / static_cast<double>(n.stalled);
  int workers = 0;
  for (const auto& p : c.la.processes) workers += sampled::is_worker(p) ? 1 : 0;
  const int cpus = c.la.host.cpu_count / std::max<int>(1, static_cast<int>(c.la.judged_gpus().size()));
  const bool by_workers = n.by_workers * 2 >= n.stalled;
  // Saturated workers: by throughput over the span they load in (starvation.h).
  const std::optional<sampled::LoaderGain> loading = by_workers ? sampled::loader_gain(c, g, cpus) : std::nullopt;
  const sampled::LoaderGain gain = loading.value_or(sampled::LoaderGain{});
  if (loading) speedup = gain.speedup;
  int suggest = cpus > 0 ? std::clamp(cpus - 1, kMinWorkers, kMaxWorkers) : kDefaultWorkers;
  if (workers > 0) {
    suggest = std::clamp(static_cast<int>(std::ceil(workers / std::max(0.05, 1.0 - share) - 1e-9)), workers + 1,
                         std::max(workers + 1, cpus > 0 ? std::min(cpus - 1, kMaxWorkers) : kMaxWorkers));
  }
  if (loading) {  // as many as make batches fast enough for the GPU, within the CPUs
    suggest = std::max(workers + 1, static_cast<int>(std::ceil(workers * gain.speedup - 1e-9)));
    if (gain.max_workers > 0) suggest = std::min(suggest, std::max(workers + 1, gain.max_workers));
  }

  Finding f = new_finding(100 * share, speedup);
  f.remedies = {"dataloader-workers"};
  f.title = fmt::format("{} starved in {:.0f}% of its active time while the {} was CPU-saturated",
                        sampled::gpu_label(g), 100 * share, by_workers ? "DataLoader" : "main process");
  f.detail = fmt::format(
      "In {} of {} sampled ticks of the {:.1f} s active window the GPU was busy only {:.0f}% on average "
      "while {} used >= {:.0f}% of a core{}.",
      n.stalled, n.measured, g.active_s(), stalled_pct,
      by_workers ? fmt::format("a DataLoader worker (of {})", workers) : std::string("the main process"),
      sampled::kSaturatedCpuPct, n.fed > 0 ? fmt::format("; when fed it runs at {:.0f}%", fed_pct) : std::string());
  if (!by_workers) {
    f.detail += " The main process read its data from storage meanwhile: it loads the batches itself.";
  }
  f.evidence = {evidence("stalled_ticks_pct", 100 * share, "%", 100 * sampled::kMinStarvedShare),
                evidence_at_most("gpu_busy_in_stalled_ticks_pct", stalled_pct, "%", sampled::kStarvedBelowPct),
                evidence("dataloader_worker_count", workers, "processes")};
  if (n.fed > 0) f.evidence.push_back(evidence("gpu_busy_when_fed_pct", fed_pct, "%"));
  if (loading) {
    f.detail += fmt::format(
        " While the workers loaded ({} ticks) the GPU was busy {:.0f}% on average and {:.0f}% when fed (upper "
        "quartile): {} workers make batches {:.2f}x faster{}.",
        gain.ticks, gain.mean_busy, gain.fed_busy,
        gain.capped ? fmt::format("{} (the CPUs less 2)", gain.max_workers) : std::string("more"), gain.speedup,
        gain.capped ? ", short of what the GPU could take" : " and the GPU takes them all");
    f.evidence.push_back(evidence("gpu_busy_while_loading_pct", gain.mean_busy, "%"));
  }
  f.recommendation =
      workers > 0 && by_workers
          ? fmt::format(
                "The DataLoader workers ({}) are CPU-bound: raise num_workers to {} (pin_memory=True, "
                "persistent_workers=True, prefetch_factor=4), or make each batch cheaper: decode/augment "
                "on the GPU (NVIDIA DALI, torchvision.transforms.v2 on CUDA tensors) or pre-process the "
                "dataset once.",
                workers, suggest)
          : fmt::format(
                "Load batches in worker processes, ahead of the GPU: DataLoader(..., num_workers={}, "
                "pin_memory=True, persistent_workers=True) and .to(device, non_blocking=True). If a "
                "trace shows the main process busy in the training loop instead, cut framework "
                "overhead: CUDA Graphs or torch.compile(mode=\"reduce-overhead\"), bigger batches.",
                suggest);
  return f;
}
}  // namespace

std::optional<Finding> input_pipeline_stall(const TraceEvidence& c) {
  using analyses::IdleCause;
  const auto& t = c.a.total();
  const TimeNs idle = t.idle_of(IdleCause::kInput);
  const double share = c.a.pct(idle);
  if (share < kMinSharePct) return std::nullopt;

  // Time the stepping threads spent inside DataLoader.__next__ (it moves to workers).
  TimeNs loader = 0;
  for (const auto& w : c.a.windows.steps) {
    if (const auto* th = c.a.index.thread(w.pid, w.tid)) loader += th->dataloader.overlap(w.start, w.end);
  }
  const TimeNs rest = t.duration - idle;
  // Enough workers that each has (loader time / time left per step) steps to make a batch.
  const double per_step_rest = std::max(1.0, static_cast<double>(rest));
  int workers = std::clamp(static_cast<int>(std::ceil(static_cast<double>(loader) / per_step_rest)) + 1, kMinWorkers,
                           kMaxWorkers);
  // The replay's count where it sized one: the fix names the workers the estimate assumed.
  if (const auto* e = analyses::estimate_of(c.a, analyses::whatif::Remedy::kLoaderWorkers); e && e->workers > 0)
    workers = e->workers;

  Finding f = new_finding(share, std::nullopt);
  f.remedies = {"dataloader-workers"};
  f.title = fmt::format("GPU waits {:.1f} ms per step for the DataLoader ({:.0f}% of the step)", c.a.ms_per_step(idle),
                        share);
  f.detail = fmt::format(
      "The thread that launches GPU work spends {:.1f} ms per step inside DataLoader.__next__; "
      "the GPU is idle for {:.1f} ms of that. The rest of the step takes {:.1f} ms, so batches "
      "must be ready {:.1f}x faster than they are made now.",
      c.a.ms_per_step(loader), c.a.ms_per_step(idle), c.a.ms_per_step(rest),
      rest > 0 ? static_cast<double>(loader) / static_cast<double>(rest) : 0.0);
  f.evidence = {evidence("gpu_idle_waiting_for_data_pct", share, "%", kMinSharePct),
                evidence("dataloader_ms_per_step", c.a.ms_per_step(loader), "ms"),
                evidence("rest_of_step_ms", c.a.ms_per_step(rest), "ms"),
                evidence("gpu_busy_pct", c.a.pct(t.busy), "%")};
  f.recommendation = fmt::format(
      "Load batches in parallel and ahead of the GPU: DataLoader(..., num_workers={}, "
      "pin_memory=True, persistent_workers=True, prefetch_factor=4), and .to(device, "
      "non_blocking=True). If workers are already used, move decoding/augmentation to the GPU "
      "(e.g. NVIDIA DALI, torchvision.transforms.v2 on CUDA tensors) or pre-process the dataset once.",
      workers);
  return f;
}

std::optional<Finding> input_pipeline_stall_samples(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const auto* g : c.la.judged_gpus()) {
    auto f = stall_on(c, *g);
    if (f && (!worst || f->time_share_pct > worst->time_share_pct)) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain input-pipeline-stall` prints.
extern const Rule input_pipeline_stall_rule = {
    .id = "input-pipeline-stall",
    .category = Category::kInput,
    .trace = input_pipeline_stall,
    .samples = input_pipeline_stall_samples,
    .stacks = input_pipeline_stall_stacks,
    .meaning =
        "The GPU waits while the next batch is loaded: the DataLoader (or the main process "
        "loading data itself) cannot keep up with the training step.",
    .detection =
        "From a trace: GPU idle time attributed to DataLoader.__next__. From live samples: ticks "
        "where the GPU is starved while a loader worker or the main process is CPU-saturated. "
        "From Python stacks: the line the launching thread waits on is data loading. Reported "
        "from 5% of the step.",
    .action =
        "Load in DataLoader workers (num_workers, pin_memory, persistent_workers, "
        "prefetch_factor); make per-sample preprocessing cheaper. See the remedy "
        "dataloader-workers.",
};

}  // namespace chokepoint::rules
