// What every importer of CUPTI activity records shares: the tracer's .cptrace
// (importers/cupti) and Nsight Systems' SQLite export (importers/nsys), which stores the
// same records in tables. CUPTI's enum values (named in tracer/trace_format.h) become the
// model's, and a synchronization record gets its thread from the runtime call it blocked.
#pragma once

#include <cstddef>
#include <cstdint>

#include "timeline/model.h"
#include "tracer/trace_format.h"

namespace chokepoint::importers {

// CUpti_ActivityMemcpyKind to the model's direction.
inline timeline::CopyKind cupti_copy_kind(int64_t k) {
  switch (k) {
    case tracer::kCopyHtoD: return timeline::CopyKind::kHtoD;
    case tracer::kCopyDtoH: return timeline::CopyKind::kDtoH;
    case tracer::kCopyDtoD: return timeline::CopyKind::kDtoD;
    case tracer::kCopyHtoH: return timeline::CopyKind::kHtoH;
    case tracer::kCopyPtoP: return timeline::CopyKind::kPtoP;
    default: return timeline::CopyKind::kUnknown;
  }
}

// CUpti_ActivityMemoryKind to the model's memory kind.
inline timeline::MemKind cupti_mem_kind(int64_t k) {
  switch (k) {
    case tracer::kMemoryPageable: return timeline::MemKind::kPageable;
    case tracer::kMemoryPinned: return timeline::MemKind::kPinned;
    case tracer::kMemoryDevice: return timeline::MemKind::kDevice;
    case tracer::kMemoryArray: return timeline::MemKind::kArray;
    case tracer::kMemoryManaged: return timeline::MemKind::kManaged;
    default: return timeline::MemKind::kUnknown;
  }
}

// CUpti_ActivitySynchronizationType to the model's kind.
inline timeline::SyncKind cupti_sync_kind(int64_t t) {
  switch (t) {
    case tracer::kSyncEvent: return timeline::SyncKind::kEventSync;
    case tracer::kSyncStreamWaitEvent: return timeline::SyncKind::kStreamWaitEvent;
    case tracer::kSyncStream: return timeline::SyncKind::kStreamSync;
    case tracer::kSyncContext: return timeline::SyncKind::kContextSync;
    default: return timeline::SyncKind::kUnknown;
  }
}

// The name Kineto gives a copy or a set ("Memcpy HtoD (Pageable -> Device)",
// "Memset (Device)"), which kernel_class and the reports know.
std::string copy_name(timeline::CopyKind k, timeline::MemKind src, timeline::MemKind dst);
std::string set_name(timeline::MemKind dst);

// One GPU op as a record gives it; append_gpu_op() adds it as a row of the model.
struct GpuOpRecord {
  timeline::GpuOpKind kind = timeline::GpuOpKind::kKernel;
  int16_t device = -1;
  int32_t stream = -1;
  timeline::TimeNs start = 0, end = 0;
  timeline::StringId name = timeline::kEmptyString;
  int64_t correlation = -1;
  std::array<int32_t, 3> grid{}, block{};  // kernels; zeros otherwise (or unknown)
  int16_t registers = -1;                  // kernels, per thread
  int32_t shared_mem = -1;                 // kernels, per block
  int64_t bytes = 0;                       // copies and sets
  timeline::CopyKind copy_kind = timeline::CopyKind::kUnknown;
  timeline::MemKind src = timeline::MemKind::kUnknown, dst = timeline::MemKind::kUnknown;
};
void append_gpu_op(timeline::GpuOps& g, const GpuOpRecord& r);

// An NVTX range on thread (pid, tid), as a user annotation of the model.
void append_annotation(timeline::CpuRanges& c, int32_t pid, int32_t tid, timeline::StringId name,
                       timeline::TimeNs start, timeline::TimeNs end);

// The synchronization rows from `first_sync` on, whose thread the record does not name,
// take the thread (and process) of the runtime call from `first_call` on with the same
// correlation.
void link_sync_threads(timeline::Timeline& tl, size_t first_call, size_t first_sync);

}  // namespace chokepoint::importers
