// TimelineIndex: the links and lookups every analysis needs, computed once from the model
// (a pure function of it): which API call launched each GPU op, which ATen op, the class
// of each kernel and API call, the GPU ops of each device in time order, and per CPU
// thread the union of time spent in DataLoader annotations, sync calls, allocator calls,
// other API calls and ATen ops.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyses/intervals.h"
#include "analyses/kernel_class.h"
#include "timeline/api_class.h"
#include "timeline/model.h"

namespace chokepoint::analyses {

struct ThreadActivity {
  Intervals dataloader;  // user annotations of DataLoader.__next__
  Intervals sync;        // API calls that block on the device + CUPTI sync records
  Intervals allocator;   // cudaMalloc / cudaFree and friends
  Intervals api;         // every other CUDA API call (launches, async copies, ...)
  Intervals op;          // ATen ops (framework dispatch)
};

inline uint64_t thread_key(int32_t pid, int32_t tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}

struct TimelineIndex {
  // Per GpuOps row.
  std::vector<int32_t> launch_row;  // RuntimeCalls row of the launching call, -1 unknown
  std::vector<int32_t> op_row;      // CpuRanges row of the launching ATen op, -1 unknown
  std::vector<KernelClass> kclass;  // kCopy for memcpy/memset
  // Bytes the kernel moved by its ATen op's recorded shapes (op_shapes.h), 0 unknown: an op
  // that launched several kernels (cuDNN's LSTM, a GEMM and its split-K reduction) shares its
  // bytes among them by their durations, and a GEMM's operands are its GEMM kernels' alone
  // (they are sized by gemm_shape), not its other kernels'.
  std::vector<double> op_bytes;
  // Per RuntimeCalls row.
  std::vector<timeline::ApiClass> api;
  std::vector<int32_t> api_op_row;  // CpuRanges row of the ATen op that made the call, -1
  // GpuOps rows of each device, sorted by start.
  std::vector<std::vector<uint32_t>> device_ops;
  // Per CPU thread.
  std::unordered_map<uint64_t, ThreadActivity> threads;

  const ThreadActivity* thread(int32_t pid, int32_t tid) const {
    auto it = threads.find(thread_key(pid, tid));
    return it == threads.end() ? nullptr : &it->second;
  }
};

TimelineIndex build_index(const timeline::Timeline& tl);

// True for the annotation the DataLoader iterator records around __next__.
bool is_dataloader_annotation(std::string_view name);

}  // namespace chokepoint::analyses
