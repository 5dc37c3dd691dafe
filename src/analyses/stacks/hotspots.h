// Host hot spots: which line of the job's Python code the GPU waits on. Each moment the
// GPU is idle is charged to the Python stack the launching thread was on at that moment
// (samples/stacks.h), aggregated by the innermost frame of the job's own code (file:line,
// function) and classified by what the stack is doing:
//
//   sync        the stack is in torch.cuda.synchronize or prints a tensor, or its innermost
//               frame is the job's line itself and that line calls .item() / .cpu() /
//               .tolist() / .numpy() / synchronize (read from the line's text): the thread
//               waits for the GPU, then launches late
//   transfer    the innermost frame is the job's line itself and that line copies a tensor
//               to the GPU (.to(device), .cuda(), copy_): a copy that holds the thread is a
//               blocking one (a pageable source; a pinned non_blocking copy returns at once)
//   waiting     the innermost frames wait for other threads or processes (threading's
//               join/wait/locks, queue, concurrent.futures, multiprocessing): the thread
//               launches nothing while it waits; the GPU's idle time belongs to the threads
//               it waits for (attribute_host_time hands it over to them)
//   data        torch.utils.data (the loader, or the main thread waiting on its workers),
//               numpy memmap/npyio, PIL, torchvision transforms and datasets, or a function
//               of the job named like get_batch / load / collate / decode / read
//   optimizer   torch.optim, gradient clipping, zero_grad
//   logging     logging, print, tqdm, tensorboard, wandb, torchmetrics
//   checkpoint  torch.save / serialization, safetensors
//   framework   torch's own Python between ops: modules' forward, autograd, dynamo
//   other       the job's own code otherwise
//
// The line's text is read only when the stack's innermost frame is that line (the time is
// in a native call the line makes): a line `t.join(); torch.cuda.synchronize()` whose
// stack ends in threading.join is waiting on threads, not on the GPU (issue 42).
//
// GPU idleness comes from the trace when there is one (exact idle intervals of the GPU)
// or from the sampled utilization (a tick 30% busy charges 70% of the stack's time in it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "samples/stacks.h"

namespace chokepoint::analyses {

enum class HostClass { kSync, kData, kOptimizer, kLogging, kCheckpoint, kFramework, kOther, kTransfer, kWait };
inline constexpr int kNumHostClasses = 9;
std::string_view host_class_name(HostClass c);

// A stretch of time and the share of it the GPU was idle (1 for a trace's idle interval).
struct IdleCell {
  int64_t start_ns = 0, end_ns = 0;
  double idle = 1;
};

struct HotSpot {
  samples::PyFrame frame;  // innermost frame of the job's own code ("" file: none)
  std::string text;        // its source line, when the recording has it
  std::string inner;       // innermost frame of the stack ("DataLoader.__next__", "sleep")
  HostClass cls = HostClass::kOther;
  double idle_s = 0;       // GPU idle time charged to it
  double on_thread_s = 0;  // time the launching thread spent there (busy GPU or not)
  // Of those, the line's own time: the stack's innermost frame was this line itself (its
  // own Python and the native calls it makes, such as the kernels a loop of tensor ops
  // launches), not library Python it called (py-spy's "own" against "total"). The time a
  // user changes by editing the line: unet_diffusion's EMA loop over its parameters,
  // against `loss.backward()` whose time is all autograd's.
  double own_idle_s = 0;
  double own_on_thread_s = 0;
};

// HostAttribution::method when no GPU work was seen: the stacks show where the host's time
// went (time on the thread), with no GPU idle time to charge.
inline constexpr std::string_view kNoGpuWork = "no GPU work";

struct HostAttribution {
  std::string method;  // "trace" (exact idle intervals), "sampled utilization" or kNoGpuWork
  std::string thread;  // the launching thread(s), e.g. "MainThread of pid 4242"
  // The launching thread that mostly waited on other threads of its process and gave its
  // place to them ("MainThread of pid 4242"; `thread` then names those it waited for);
  // "" when none did.
  std::string waiting_thread;
  double window_s = 0;        // analyzed time
  double gpu_idle_s = 0;      // GPU idle time in the window
  double covered_idle_s = 0;  // of it, while the launching thread had a sampled stack
  double idle_by_class[kNumHostClasses] = {};
  // Of the covered idle time, what stacks inside torch.utils.data hold (a DataLoader in
  // use, its workers or not); the rest of the data class is the job's own batch making.
  double dataloader_idle_s = 0;
  std::vector<HotSpot> spots;  // largest idle_s first
  double idle_share(HostClass c) const {
    return covered_idle_s > 0 ? idle_by_class[static_cast<int>(c)] / covered_idle_s : 0;
  }
  // The spot of the job's own code with the most own time on the launching thread, among
  // `classes` (all when empty); nullptr when no line of the job's ran itself.
  const HotSpot* top_own(const std::vector<HostClass>& classes = {}) const;
  bool no_gpu_work() const { return method == kNoGpuWork; }
};

struct AttributionInput {
  const samples::PyStacks* stacks = nullptr;
  std::vector<IdleCell> idle;  // sorted, disjoint
  int64_t window_start_ns = 0, window_end_ns = 0;
  // The launching threads as (pid, OS tid); empty: the main thread of every process
  // (tid == pid) not in `exclude_pids` (DataLoader workers).
  std::vector<std::pair<int64_t, int64_t>> launch_threads;
  std::vector<int64_t> exclude_pids;
  std::string method;
};

HostAttribution attribute_host_time(const AttributionInput& in);

// Whether a spot's own time is worth showing: at least 1% of the window on the thread.
bool own_time_shown(const HostAttribution& a, const HotSpot& h);

// The spots a report lists: the `by_idle` with the most GPU idle time (with no GPU work:
// the most time on the launching thread), then up to `by_own`
// more whose own time is shown (own_time_shown), most own time first, outside the model's
// code (the framework class): the job's own lines that run the most themselves, which a
// list by total time can leave out (unet_diffusion's EMA loop was 11th).
std::vector<const HotSpot*> spots_to_show(const HostAttribution& a, size_t by_idle, size_t by_own);

// Whether a line of the job's code waits for the GPU: .item(), .cpu(), .tolist(),
// .numpy(), synchronize().
bool line_syncs(std::string_view text);

// Whether a line of the job's code copies a tensor to the GPU: .cuda(), copy_(), or .to()
// naming a device (cuda, dev, device, gpu) or non_blocking.
bool line_copies_to_gpu(std::string_view text);

// The class of one stack (innermost frame first); `text` is the line of the innermost
// frame of the job's own code ("" unknown).
HostClass classify_stack(const samples::PyStacks& s, const std::vector<int32_t>& stack, const std::string& text);

}  // namespace chokepoint::analyses
