// The dependency graph a what-if replays (the approach of Daydream, ATC'20, and Lumos,
// MLSys'25): the analyzed steps of one process as the host saw them, a sequence of CUDA
// API calls separated by host time, and the GPU ops those calls launched, queued per
// stream, with the dependencies the trace shows:
//
//   host order      each API call starts after the previous one ends plus the host time
//                   between them (Python, ATen dispatch, DataLoader waits). The calls of
//                   all threads of the process are merged in time order: PyTorch's
//                   autograd thread launches the backward pass while the main thread
//                   waits for it, so the host work is serial (threads that truly run at
//                   the same time are serialized: an approximation, said in the report);
//   launch          a GPU op is ready a launch latency after its call starts;
//   stream order    ops of one stream run one after another;
//   cross-stream    an op that started later than both its launch and its stream allowed
//                   waited for an op of another stream: the one that ended just before it;
//   events          cudaEventRecord / cudaStreamWaitEvent read from the launch order: the op
//                   launched after waits runs after the op launched before the record it
//                   waited on (on another stream), even where launch times hid it; from a
//                   CUPTI trace with CUDA_EVENT records, the op that record marks;
//   blocking calls  a synchronize, a synchronous or pageable copy, cudaFree ... that ended
//                   right after a GPU op ended waited for that op; replayed, it returns
//                   when that op's replayed end comes (plus what the call did after it).
//
// Built once from the model (pure function); replay.h simulates it with remedies applied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"
#include "timeline/api_class.h"
#include "timeline/model.h"

namespace chokepoint::analyses::whatif {

using timeline::TimeNs;

// Where a host event sits, for the remedies that remove or change that host work.
enum HostFlag : uint8_t {
  kInOptimizer = 1,   // inside an Optimizer.step annotation
  kBlockingCopy = 2,  // a copy call that returned only when its copy was done (pageable/sync)
};

struct HostEvent {
  TimeNs start = 0, end = 0;  // the API call, as recorded
  TimeNs gap = 0;             // host time before it: since the previous call ended
  TimeNs gap_loader = 0;      // of which inside DataLoader.__next__
  int32_t ops_in_gap = 0;     // ATen op (cpu_op) events that began in the gap or the call
  int32_t inputs_in_gap = 0;  // their recorded input tensors (record_shapes)
  int32_t calls_in_gap = 0;   // other CUDA API calls in the gap (cudaGetDevice, event records ...)
  int32_t py_in_gap = 0;      // python_function events that began in it (with_stack)
  timeline::ApiClass api = timeline::ApiClass::kOther;
  int32_t rc_row = -1;     // RuntimeCalls row
  int32_t window = -1;     // step whose CPU span the call started in
  int32_t waits_for = -1;  // GpuNode it blocked on, -1 none
  TimeNs after_wait = 0;   // time the call took after that node ended
  uint8_t flags = 0;
};

struct GpuNode {
  uint32_t row = 0;           // GpuOps row
  int32_t launch = -1;        // HostEvent that launched it, -1 none in the span
  int32_t lane = 0;           // dense (device, stream) index
  int32_t dep = -1;           // GpuNode of another lane it waited for, -1 none
  TimeNs start = 0, dur = 0;  // as recorded
  bool backlog = false;       // launched before the trace, queued ahead of the first op launched in it
};

struct StepGraph {
  int32_t pid = -1;  // the process replayed
  int32_t source = 0;
  TimeNs origin = 0;                        // start of the first analyzed window, or of its CPU span if earlier
  TimeNs host_from = 0;                     // start of the first window's CPU span: the host replay begins here
  TimeNs span_end = 0;                      // end of the last analyzed window
  TimeNs tail = 0;                          // host time after the last call until the host's last step ends
  TimeNs launch_latency = 0;                // typical call start -> kernel start on an idle stream
  std::vector<HostEvent> host;              // in host order
  std::vector<GpuNode> gpu;                 // per lane in stream order, lanes one after another
  std::vector<std::vector<int32_t>> lanes;  // GpuNode indices of each lane, in order
  std::vector<TimeNs> window_start;         // the analyzed windows of this process
  std::vector<TimeNs> window_cpu_start;     // ... and the starts of their CPU spans (a call belongs
                                            // to the step whose CPU span it started in)
  int64_t steps = 0;
  bool threads_overlapped = false;  // calls of two threads overlapped in time

  TimeNs span() const { return span_end - origin; }
};

// The graph of the process that ran the analyzed steps (the steps' process; with several,
// the one whose windows hold the most GPU time). Empty (no host events) when the trace
// has no CUDA API calls (a GPU-only trace, CHOKEPOINT_TRACE_API=0).
StepGraph build_step_graph(const timeline::Timeline& tl, const TimelineIndex& ix, const StepWindows& w);

}  // namespace chokepoint::analyses::whatif
