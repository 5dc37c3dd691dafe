// The Python-stack evaluators of host-sync, input-pipeline-stall and host-work: each names
// the line of the job's code that holds the most GPU idle time of its class
// (analyses/stacks/hotspots.h), with the idle time it costs per step (per second of the
// run when steps are unknown).
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {

namespace {

using analyses::HostClass;

// A class must hold this share of the idle time the stacks explain, and of the window.
constexpr double kMinIdleShare = 0.10;
constexpr double kMinWindowShare = 0.03;

std::string where(const analyses::HotSpot& h) {
  if (h.frame.file.empty()) return "(no frame of the job's own code)";
  std::string file = h.frame.file;
  if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  return fmt::format("{}:{}", file, h.frame.line);
}

// The job's own line that runs the most itself among `classes` but the model's code (its
// own Python and the kernels it launches, not the library Python it calls:
// analyses/stacks/hotspots.h), when it is not `top` and holds at least kMinOwnShare of the
// window: the line a user edits. On the H200, unet_diffusion's EMA loop held 5.8% of its
// main thread in a burst, 11th by total time behind loss.backward(); its fix measured 1.07x.
// Its gain, as for the class: its time on the thread off the window, no shorter than the
// GPU's busy time. Appended to the finding's detail, with its share as evidence.
constexpr double kMinOwnShare = 0.01;

void add_own_line(Finding& f, const StackEvidence& c, std::initializer_list<HostClass> classes,
                  const analyses::HotSpot& top, double busy) {
  const analyses::HostAttribution& a = c.attr;
  // Not the model's code (the framework class: lines inside modules' forward, called by
  // torch): their own time is the framework's overhead per op, which graphs or compile
  // remove, not an edit of the line (gpt_char's attention call).
  std::vector<HostClass> own_classes;
  for (HostClass k : classes) {
    if (k != HostClass::kFramework) own_classes.push_back(k);
  }
  const analyses::HotSpot* own = a.top_own(own_classes);
  if (own == nullptr || own == &top || own->own_on_thread_s < kMinOwnShare * a.window_s) return;
  const double after = std::max(busy, a.window_s - own->own_on_thread_s);
  const double gain = a.window_s / std::max(after, 0.02 * a.window_s);
  const std::string per = c.steps > 0 ? fmt::format("{:.2f} ms per step", 1e3 * own->own_on_thread_s / c.steps)
                                      : fmt::format("{:.0f} ms per second", 1e3 * own->own_on_thread_s / a.window_s);
  f.detail += fmt::format(
      " Of the job's own lines (their own Python and the kernels they launch, not the library code they call), {}{} "
      "in {}() runs the most: {} on the thread ({:.1f}% of the window); taking it off the step would give about "
      "{:.2f}x.",
      where(*own), own->text.empty() ? "" : fmt::format(" `{}`", own->text), own->frame.function, per,
      100.0 * own->own_on_thread_s / a.window_s, gain);
  f.evidence.push_back(
      evidence("own_line_on_thread_pct", 100.0 * own->own_on_thread_s / a.window_s, "%", 100.0 * kMinOwnShare));
}

std::optional<Finding> for_classes(const StackEvidence& c, std::initializer_list<HostClass> classes, const char* what,
                                   std::vector<std::string> remedies, std::string recommendation) {
  const analyses::HostAttribution& a = c.attr;
  if (!c.decisive() || a.window_s <= 0) return std::nullopt;
  double idle = 0;
  for (HostClass k : classes) idle += a.idle_by_class[static_cast<int>(k)];
  if (idle < kMinIdleShare * a.covered_idle_s || idle < kMinWindowShare * a.window_s) return std::nullopt;
  const analyses::HotSpot* top = nullptr;
  for (const auto& h : a.spots) {
    if (std::find(classes.begin(), classes.end(), h.cls) != classes.end()) {
      top = &h;
      break;
    }
  }
  if (top == nullptr) return std::nullopt;
  const double share = 100.0 * idle / a.window_s;
  // What-if. A sync's cost is the GPU's idle gap after it (charged whole to the sync line):
  // without it, the window loses that idle time. Serial host work on the launching thread
  // (making a batch, Python between launches) costs its own time on the thread: without
  // it the window shrinks by that time, down to the GPU's busy time at most (then the GPU
  // is the bottleneck). On resnet_fake with the loader in the main thread this gave 6.7x
  // where workers measured 6.3x; the idle time alone gave 3.2x (docs/VALIDATION.md).
  double on_thread = 0;
  for (const auto& h : a.spots) {
    if (std::find(classes.begin(), classes.end(), h.cls) != classes.end()) on_thread += h.on_thread_s;
  }
  const double busy = std::max(0.0, a.window_s - a.gpu_idle_s);
  const bool sync = classes.size() == 1 && *classes.begin() == HostClass::kSync;
  const double after = sync ? a.window_s - idle : std::max(busy, a.window_s - std::max(on_thread, idle));
  const double gain = a.window_s / std::max(after, 0.02 * a.window_s);
  Finding f = new_finding(share, gain);
  const std::string per = c.steps > 0 ? fmt::format("{:.2f} ms of GPU idle per step", 1e3 * top->idle_s / c.steps)
                                      : fmt::format("{:.0f} ms of GPU idle per second", 1e3 * top->idle_s / a.window_s);
  const std::string line = top->text.empty() ? "" : fmt::format(" `{}`", top->text);
  f.title = fmt::format("{}{} in {}(): {} ({}, {:.0f}% of the GPU's idle time)", where(*top), line, top->frame.function,
                        per, what, 100.0 * top->idle_s / std::max(a.gpu_idle_s, 1e-9));
  std::string others;
  int n = 0;
  for (const auto& h : a.spots) {
    if (&h == top || std::find(classes.begin(), classes.end(), h.cls) == classes.end() || h.idle_s <= 0) continue;
    if (++n > 3) break;
    others += fmt::format("{}{} ({:.0f}%)", others.empty() ? "" : ", ", where(h),
                          100.0 * h.idle_s / std::max(a.gpu_idle_s, 1e-9));
  }
  f.detail = fmt::format(
      "The GPU was idle {:.0f}% of {:.1f} s ({}); sampled Python stacks of {}{} put {:.0f}% of that idle time in {}, "
      "{:.0f}% at {} in {}(){}.{}",
      100.0 * a.gpu_idle_s / a.window_s, a.window_s,
      a.method == "trace" ? "from the trace" : "from sampled utilization", a.thread,
      a.waiting_thread.empty() ? ""
                               : fmt::format(" (the threads that ran while {} waited on them, in join, locks or "
                                             "queues)",
                                             a.waiting_thread),
      100.0 * idle / std::max(a.gpu_idle_s, 1e-9), what, 100.0 * top->idle_s / std::max(a.gpu_idle_s, 1e-9),
      where(*top), top->frame.function,
      top->inner.empty() || top->inner == top->frame.function ? "" : " (inside " + top->inner + ")",
      others.empty() ? "" : " Also: " + others + ".");
  f.evidence.push_back(evidence("gpu_idle_pct", 100.0 * a.gpu_idle_s / a.window_s, "%"));
  f.evidence.push_back(
      // Of the idle time the stacks cover, as the rule tests it (issue 44: it printed the share
      // of all idle time against this bar, which could read below it while the finding fired).
      evidence("idle_share_of_sampled_idle_pct", 100.0 * idle / std::max(a.covered_idle_s, 1e-9), "%",
               100.0 * kMinIdleShare));
  f.evidence.push_back(evidence("top_line_idle_s", top->idle_s, "s"));
  add_own_line(f, c, classes, *top, busy);
  f.recommendation = std::move(recommendation);
  f.remedies = std::move(remedies);
  return f;
}

}  // namespace

std::optional<Finding> host_sync_stacks(const StackEvidence& c) {
  return for_classes(c, {HostClass::kSync}, "waiting for the GPU", {"defer-syncs"},
                     "Keep values on the GPU between logging steps: accumulate `loss.detach()` in a tensor and call "
                     ".item() / .cpu() only every N steps; compute metrics on the GPU; remove "
                     "torch.cuda.synchronize() from the loop.");
}

// A copy to the GPU that holds the launching thread is a blocking one: from pageable
// memory (staged by the CPU through the driver's bounce buffer) or synchronous. A pinned
// source copied with non_blocking=True returns at once, so the thread moves on to launch.
// pageable_item (tests/data/workloads/misreads.py): a 64 MB pageable tensor copied each
// step, then one scalar read with .cpu(); the copy was read as sync time (issue 42).
std::optional<Finding> pageable_memcpy_stacks(const StackEvidence& c) {
  return for_classes(c, {HostClass::kTransfer}, "copying to the GPU", {"pinned-copies"},
                     "Copy from pinned memory without blocking: pin the host tensor once (tensor.pin_memory(), or "
                     "DataLoader(pin_memory=True)) and copy with .to(device, non_blocking=True); keep data that is "
                     "reused on the GPU instead of copying it every step.");
}

// The job's DataLoader workers as the samples saw them.
struct Loader {
  int workers = 0;
  int restarted = 0;       // exited well before the run ended: not persistent_workers
  double busiest_pct = 0;  // the highest mean CPU of a worker, 100 = one core
};

Loader loader_of(const analyses::sampled::LiveAnalysis& la) {
  Loader l;
  const auto margin = static_cast<int64_t>(std::max(2e9, 0.1 * la.duration_s * 1e9));
  for (const auto& p : la.processes) {
    if (!sampled::is_worker(p)) continue;
    ++l.workers;
    l.restarted += p.meta.exited && p.meta.last_seen_ns < la.end_ns - margin;
    if (p.cpu_pct) l.busiest_pct = std::max(l.busiest_pct, p.cpu_pct->mean);
  }
  return l;
}

// Workers whose busiest used less than this of a core on average, none of them restarted:
// the loader has spare capacity, and the loop's wait at it is the main process taking
// batches (the pin-memory thread's copy, the hand-over), which more workers do not shorten.
// resnet_fake with 12 persistent workers on the H200: the busiest at 25%, the main thread
// still waiting at `for ... in enumerate(train_loader)` for 16% of the GPU's idle time; with
// 4 workers, each at 96-100%, 12 persistent ones ran 1.18-1.48x faster (docs/VALIDATION.md).
constexpr double kSpareWorkerPct = 50;

std::optional<Finding> input_pipeline_stall_stacks(const StackEvidence& c) {
  auto f = for_classes(c, {HostClass::kData}, "loading data", {"dataloader-workers"},
                       "Make batches off the training thread: a DataLoader with num_workers > 0, pin_memory=True and "
                       "persistent_workers=True (or a background thread that prefetches the next batch), so the GPU "
                       "never waits for the next batch.");
  if (!f) return f;
  // No DataLoader in the stacks that hold the wait: the loop cuts its batches itself (a
  // memmap sliced in the loop, as nanoGPT's get_batch), and workers are not the change.
  const double data_idle = c.attr.idle_by_class[static_cast<int>(HostClass::kData)];
  if (c.attr.dataloader_idle_s < 0.5 * data_idle) {
    f->remedies = {"prefetch-batches"};
    f->detail += fmt::format(
        " No DataLoader holds this time ({:.0f}% of it is in torch.utils.data): the loop makes its batches itself.",
        100.0 * c.attr.dataloader_idle_s / std::max(data_idle, 1e-9));
    f->recommendation =
        "Make the next batch while the GPU runs this one: the batch code in an IterableDataset read by a "
        "DataLoader(num_workers=N, pin_memory=True), or a background thread filling a queue of 2-4 batches; copy "
        "with .to(device, non_blocking=True).";
    return f;
  }
  if (c.live == nullptr) return f;
  const Loader l = loader_of(*c.live);
  if (l.workers == 0 || l.restarted > 0 || l.busiest_pct >= kSpareWorkerPct) return f;
  // No remedy of ours shortens this wait, so no estimate either: a finding's estimate is its
  // remedy's (issue 44; it promised 1.24x with no remedy named, resnet_fake with 12 workers).
  f->remedies.clear();
  f->estimated_speedup.reset();
  f->severity = severity_for(f->time_share_pct, 0);
  f->detail += fmt::format(
      " The {} DataLoader workers had spare CPU (the busiest used {:.0f}% of a core on average) and kept running: "
      "more workers would not make batches sooner. The wait is the main process taking each batch.",
      l.workers, l.busiest_pct);
  f->evidence.push_back(evidence_at_most("busiest_loader_worker_cpu_pct", l.busiest_pct, "%", kSpareWorkerPct));
  f->recommendation =
      "The workers keep up; the main process takes each batch too slowly: make batches smaller to hand over (uint8 "
      "images, normalized on the GPU after the copy), keep pin_memory=True with .to(device, non_blocking=True), "
      "raise prefetch_factor, and keep other Python threads of the main process (which share its GIL) idle.";
  return f;
}

std::optional<Finding> host_work_stacks(const StackEvidence& c) {
  return for_classes(
      c, {HostClass::kOptimizer, HostClass::kLogging, HostClass::kCheckpoint, HostClass::kFramework, HostClass::kOther},
      "host work between launches", {"move-host-work"},
      "Move this work out of the step or make it cheaper: fused/foreach optimizers "
      "(fused=True), log every N steps, checkpoint asynchronously, torch.compile or CUDA graphs for "
      "Python overhead between many small ops.");
}

// gil-contention from the stacks: Python threads of one process that wanted the GIL (their
// stacks in Python code) and waited for it a large share of that time.
std::optional<Finding> gil_contention_stacks(const StackEvidence& c) {
  // Waiting a quarter of the time it wants to run, summed over at least a tenth of the run.
  // The wait is already bounded by the other threads' CPU (analyses/stacks/gil.h): the
  // milder real contention measured, three threads at a 10% duty, reads 35%; a DataLoader's
  // pin-memory thread beside a busy main thread 13% (docs/VALIDATION.md).
  constexpr double kMinWaitShare = 0.25;
  constexpr double kMinWaitOfRun = 0.10;
  if (c.gil == nullptr || c.run_s <= 0) return std::nullopt;
  for (const analyses::GilProcess& p : *c.gil) {
    if (p.wait_share() < kMinWaitShare || p.wait_s < kMinWaitOfRun * c.run_s) continue;
    int waiting = 0;
    std::string threads;
    for (const auto& t : p.threads) {
      if (t.wait_s < 0.05 * p.wait_s) continue;
      ++waiting;
      threads += fmt::format("{}{} ({}) waits {:.0f}% of {:.1f} s", threads.empty() ? "" : ", ",
                             t.name.empty() ? std::to_string(t.tid) : t.name, t.tid,
                             100.0 * t.wait_s / std::max(t.want_s, 1e-9), t.want_s);
    }
    if (waiting < 2) continue;
    Finding f = new_finding(100.0 * p.wait_s / c.run_s / waiting, std::nullopt);
    f.remedies = {"processes-not-threads"};
    f.title = fmt::format("{} Python threads of PID {} wait for the GIL {:.0f}% of the time they have Python to run",
                          waiting, p.pid, 100.0 * p.wait_share());
    f.detail = fmt::format(
        "Their sampled stacks were in Python code (no sleep, lock, queue or sync) for {:.1f} s, and they ran {:.1f} s "
        "of it: {}. Only one thread runs Python at a time.",
        p.want_s, p.want_s - p.wait_s, threads);
    f.evidence.push_back(evidence("gil_wait_share_pct", 100.0 * p.wait_share(), "%", 100.0 * kMinWaitShare));
    f.evidence.push_back(evidence("gil_wait_s", p.wait_s, "s"));
    f.recommendation =
        "Move the CPU-heavy Python work to processes (multiprocessing, DataLoader workers) or to native code "
        "that releases the GIL (numpy, torch ops); threads only help while they wait on I/O.";
    return f;
  }
  return std::nullopt;
}

}  // namespace chokepoint::rules
