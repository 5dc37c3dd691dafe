// When `run` takes its bursts of fast Python stack samples (live/stack_sampling.h), apart
// from the py-spy processes that take them, so that the plan can be tested on a timeline.
//
// The first 1 s after the job's GPU first ran kernels (its imports are over: on the H200 a
// PyTorch program was still importing 8 s after start, and bert_finetune trained only ~5 s
// of its 34 s, so waiting 3 s missed most of it; any utilization counts: resnet_fake, bound
// by its input, read 0-18% and crossed 10% 1.4 s into training), else 8 s after sampling
// started when no GPU is read, else after 60 s.
//
// A burst counts when it went round the job's training loop; one that did not (the job
// standing still in one long call: unet_diffusion's first backward ran 17-23 s on the H200
// under cuDNN autotuning, with the GPU busy; or still building its model) does not, and the
// next comes 2 s after it. While the bursts that went round it do not yet count the job's
// steps surely, the next comes 1.5 s after the last (resnet_fake's 7 s of training at
// 151 ms a step: 8-13 iterations a burst, 20 needed; 1.5 s rather than 0.5 s or 2 s from
// replaying the schedule on whole runs: tests/golden/loop_steps_golden_test.cc,
// docs/VALIDATION.md). At most 10 bursts come early this way in a run, except those that
// stood still with the GPU idle (compiling: gpt_char --compile's first iteration ran 33 s
// on the H200, GPU utilization 0 but for blips under 1 s; loading, preparing data): after
// those the gap doubles (2 s, 4 s, ... up to a minute) and the next comes as soon as the GPU
// has been busy 1 s without a break, which is training starting (there, the ten early
// bursts were spent on the compilation and the 5.5 s of training fell between bursts).
//
// The counted ones come 4 s, 14 s and 34 s after the first (a job of 15-30 s, as
// bert_finetune and resnet_fake on the H200, ended before a burst 10 s later; evaluation at
// the start of training, as nanoGPT does, is behind the later ones), then one a minute. At
// 500 Hz py-spy takes ~40% of a core while one runs (docs/BENCHMARKS.md): ~1.3% on average
// over a long job.
#pragma once

#include <cstdint>

namespace chokepoint::live {

// What a burst that ended showed.
enum class BurstOutcome {
  kNoLoop,      // it did not go round the job's loop (standing still in one call, or elsewhere)
  kLoopUnsure,  // round the loop; the bursts so far do not count its steps surely yet
  kLoopSure,    // and they do
};

class BurstSchedule {
 public:
  static constexpr int64_t kBurstNs = 2'000'000'000;
  static constexpr int64_t kGpuBusyFirstNs = 1'000'000'000;
  static constexpr int64_t kNoGpuFirstNs = 8'000'000'000;
  static constexpr int64_t kLatestFirstNs = 60'000'000'000;
  static constexpr int64_t kAfterCountedNs[] = {4'000'000'000, 10'000'000'000, 20'000'000'000};
  static constexpr int64_t kEveryNs = 60'000'000'000;
  // The gap after a burst that did not go round the loop, and after one that did but left
  // the count unsure (more of the same is what it needs).
  static constexpr int64_t kAfterNoLoopNs = 2'000'000'000;
  static constexpr int64_t kAfterUnsureNs = 1'500'000'000;
  static constexpr int kMaxEarly = 10;

  // Sampling of the job started at `now` (monotonic ns).
  explicit BurstSchedule(int64_t attached_ns) : attached_ns_(attached_ns) {}

  // The longest gap after bursts in a row that stood still with the GPU idle, and how long
  // the GPU must be busy without a break to bring the next one sooner.
  static constexpr int64_t kAfterIdleMaxNs = kEveryNs;
  static constexpr int64_t kGpuWokeNs = 1'000'000'000;

  // Whether a burst is due at `now`, with what the GPUs read at this tick (gpu_read: any
  // GPU utilization read; gpu_busy: one ran kernels). Called at every tick, while a burst
  // runs too (false then): what the GPU did during a burst decides what follows it.
  bool due(int64_t now, bool gpu_read, bool gpu_busy);
  // A burst started at `now`.
  void started(int64_t now);
  // The burst ended at `now`, showing `what`.
  void ended(int64_t now, BurstOutcome what);

  int started_count() const { return started_; }
  int counted() const { return counted_; }

 private:
  int64_t attached_ns_ = 0;
  int64_t gpu_busy_since_ = 0;
  int64_t next_ = 0;
  int started_ = 0;
  int counted_ = 0;  // started, less those that did not go round the loop
  int early_ = 0;    // bursts after which the next came early
  bool running_ = false;
  int64_t started_at_ = 0;          // the last burst's start
  int ticks_ = 0, idle_ticks_ = 0;  // ticks seen while it ran, and those with the GPU idle
  int64_t busy_from_ = 0;           // start of the GPU's busy stretch going on, 0 while it is idle
  int idle_still_ = 0;              // bursts in a row that stood still with the GPU idle
  bool wake_ = false;               // the next comes once the GPU has been busy kGpuWokeNs
};

}  // namespace chokepoint::live
