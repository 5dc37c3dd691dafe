// The timeline model: what every importer produces and every analysis reads.
//
// Columnar tables (one std::vector per column, one row per event) so that 10^8 events fit
// in memory (a GPU op row is ~90 bytes, a CPU range ~50) and scans touch only the columns
// they need. Times are int64 nanoseconds on one clock per Timeline (for Kineto traces:
// baseTimeNanoseconds + ts * 1000, i.e. ns since the Unix epoch). Unknown integers are
// -1, unknown floats NaN, unknown strings kEmptyString, unknown enums kUnknown.
//
// Rows are appended by importers in any order; Timeline::finalize() sorts every table
// by start time (ties: by end) and must be called before analyses run.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "timeline/string_pool.h"

namespace chokepoint::timeline {

using TimeNs = int64_t;
inline constexpr float kUnknownF = std::numeric_limits<float>::quiet_NaN();

// ---------------------------------------------------------------------------------------
// Enumerations shared by importers and analyses.

enum class GpuOpKind : uint8_t { kKernel, kMemcpy, kMemset };

// Direction of a copy (CUPTI's copyKind, Kineto's "Memcpy HtoD" etc.).
enum class CopyKind : uint8_t { kUnknown, kHtoD, kDtoH, kDtoD, kHtoH, kPtoP };

// Memory a copy reads from or writes to (CUPTI's memoryKind, Kineto's "(Pageable -> Device)").
enum class MemKind : uint8_t { kUnknown, kPageable, kPinned, kDevice, kArray, kManaged };

// "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"; "unknown".
const char* copy_kind_name(CopyKind k);
// "Pageable", "Pinned", "Device", "Array", "Managed" (Kineto's spelling); "unknown".
const char* mem_kind_name(MemKind k);

// Kind of CPU range.
enum class CpuCategory : uint8_t {
  kOp,              // cpu_op: an ATen operator
  kUserAnnotation,  // user_annotation / record_function / NVTX range (incl. ProfilerStep#N)
  kPythonFunction,  // python_function (with_stack traces)
  kOther,           // anything else with a duration on a CPU thread
};

enum class ApiKind : uint8_t { kRuntime, kDriver };

// Kind of a CUDA synchronization record (CUPTI CUpti_ActivitySynchronizationType).
enum class SyncKind : uint8_t { kUnknown, kEventSync, kStreamWaitEvent, kStreamSync, kContextSync };

// How step boundaries were found.
enum class StepSource : uint8_t { kProfilerStep, kNvtx, kInferred };

// ---------------------------------------------------------------------------------------
// Tables. Each has size(), reserve(), and for_each_column() (used to sort and to count
// memory generically). Column order in for_each_column is irrelevant.

// Work executed on a GPU: kernels, memcpys, memsets. Kineto: cat kernel / gpu_memcpy /
// gpu_memset, pid = device, tid = stream.
struct GpuOps {
  std::vector<GpuOpKind> kind;
  std::vector<int16_t> device;                // index into Timeline::devices
  std::vector<int32_t> stream;                // CUDA stream id
  std::vector<TimeNs> start;                  // ns
  std::vector<TimeNs> end;                    // ns, >= start
  std::vector<StringId> name;                 // kernel name (demangled) or "Memcpy HtoD (Pageable -> Device)"
  std::vector<int64_t> correlation;           // CUPTI correlation id: links to RuntimeCalls::correlation
  std::vector<int64_t> external_id;           // Kineto External id: links to CpuRanges::external_id
  std::vector<std::array<int32_t, 3>> grid;   // kernels: grid dims; zeros otherwise
  std::vector<std::array<int32_t, 3>> block;  // kernels: block dims; zeros otherwise
  std::vector<int16_t> registers;             // kernels: registers per thread, -1 unknown
  std::vector<int32_t> shared_mem;            // kernels: shared memory per block in bytes, -1 unknown
  std::vector<float> occupancy_pct;           // kernels: est. achieved occupancy % (0..100), NaN unknown
  std::vector<int64_t> bytes;       // memcpy/memset: bytes moved/set; NCCL kernels: message bytes; 0 other kernels
  std::vector<CopyKind> copy_kind;  // memcpy: direction
  std::vector<MemKind> src_kind;    // memcpy: source memory; memset: kUnknown
  std::vector<MemKind> dst_kind;    // memcpy/memset: destination memory

  size_t size() const { return start.size(); }
  template <typename F>
  void for_each_column(F&& f) {
    f(kind);
    f(device);
    f(stream);
    f(start);
    f(end);
    f(name);
    f(correlation);
    f(external_id);
    f(grid);
    f(block);
    f(registers);
    f(shared_mem);
    f(occupancy_pct);
    f(bytes);
    f(copy_kind);
    f(src_kind);
    f(dst_kind);
  }
};

// Durations on CPU threads: operators, annotations (ProfilerStep#N, DataLoader __next__,
// Optimizer.step), Python functions. Kineto: cat cpu_op, user_annotation, python_function.
struct CpuRanges {
  std::vector<int32_t> pid;
  std::vector<int32_t> tid;
  std::vector<CpuCategory> category;
  std::vector<StringId> name;
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<int64_t> external_id;  // -1 unknown
  std::vector<int64_t> sequence;     // autograd "Sequence number", -1 unknown
  std::vector<uint32_t> inputs;      // index into OpInputs::op_begin, kNoInputs if none

  static constexpr uint32_t kNoInputs = 0xffffffffu;
  size_t size() const { return start.size(); }
  template <typename F>
  void for_each_column(F&& f) {
    f(pid);
    f(tid);
    f(category);
    f(name);
    f(start);
    f(end);
    f(external_id);
    f(sequence);
    f(inputs);
  }
};

// Input types and shapes of CPU ops (record_shapes=True): op i (CpuRanges::inputs[row] = i)
// has inputs [op_begin[i], op_begin[i+1]); input j has type type[j] (e.g. "float",
// "c10::BFloat16", "" for non-tensors) and dims dims[dim_begin[j] .. dim_begin[j+1]).
// A scalar or non-tensor input has zero dims. Append with add_op().
struct OpInputs {
  std::vector<uint32_t> op_begin{0};
  std::vector<StringId> type;
  std::vector<uint32_t> dim_begin{0};
  std::vector<int64_t> dims;

  size_t ops() const { return op_begin.size() - 1; }
  uint32_t num_inputs(uint32_t op) const { return op_begin[op + 1] - op_begin[op]; }
  StringId input_type(uint32_t op, uint32_t j) const { return type[op_begin[op] + j]; }
  // Rank and dims of input j of op.
  uint32_t rank(uint32_t op, uint32_t j) const {
    uint32_t k = op_begin[op] + j;
    return dim_begin[k + 1] - dim_begin[k];
  }
  int64_t dim(uint32_t op, uint32_t j, uint32_t d) const { return dims[dim_begin[op_begin[op] + j] + d]; }
  // Starts a new op; returns its index. Then call add_input() for each input.
  uint32_t begin_op() { return static_cast<uint32_t>(op_begin.size() - 1); }
  void add_input(StringId t, const int64_t* d, uint32_t rank) {
    type.push_back(t);
    dims.insert(dims.end(), d, d + rank);
    dim_begin.push_back(static_cast<uint32_t>(dims.size()));
  }
  void end_op() { op_begin.push_back(static_cast<uint32_t>(type.size())); }
};

// CUDA runtime and driver API calls on CPU threads. Kineto: cat cuda_runtime, cuda_driver.
struct RuntimeCalls {
  std::vector<int32_t> pid;
  std::vector<int32_t> tid;
  std::vector<ApiKind> api;
  std::vector<StringId> name;  // "cudaLaunchKernel", "cuLaunchKernelEx", ...
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<int64_t> correlation;  // links to GpuOps::correlation, -1 unknown
  std::vector<int64_t> external_id;  // links to CpuRanges::external_id, -1 unknown
  std::vector<int32_t> cbid;         // CUPTI callback id, -1 unknown

  size_t size() const { return start.size(); }
  template <typename F>
  void for_each_column(F&& f) {
    f(pid);
    f(tid);
    f(api);
    f(name);
    f(start);
    f(end);
    f(correlation);
    f(external_id);
    f(cbid);
  }
};

// CUDA synchronization records (CUPTI SYNCHRONIZATION activity; Kineto cat cuda_sync).
// They say when a CPU thread was blocked waiting for the GPU.
struct SyncEvents {
  std::vector<int32_t> pid;
  std::vector<int32_t> tid;
  std::vector<int16_t> device;  // -1 unknown
  std::vector<int32_t> stream;  // -1 unknown
  std::vector<SyncKind> kind;
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;
  std::vector<int64_t> correlation;  // links to the RuntimeCalls row that blocked
  // A stream wait whose cudaEventRecord the trace holds (CUPTI's CUDA_EVENT records, tied
  // by cudaEventSyncId): the stream the event was recorded on and the record call's
  // correlation, so the op it waited on is the last one launched on that stream before
  // it. -1 where unknown (Kineto, nsys, CUPTI traces before 2026-12-05).
  std::vector<int32_t> event_stream;
  std::vector<int64_t> event_correlation;

  size_t size() const { return start.size(); }
  template <typename F>
  void for_each_column(F&& f) {
    f(pid);
    f(tid);
    f(device);
    f(stream);
    f(kind);
    f(start);
    f(end);
    f(correlation);
    f(event_stream);
    f(event_correlation);
  }
};

// Ranges projected on GPU streams (Kineto gpu_user_annotation; NVTX on GPU rows).
struct GpuAnnotations {
  std::vector<int16_t> device;
  std::vector<int32_t> stream;
  std::vector<StringId> name;
  std::vector<TimeNs> start;
  std::vector<TimeNs> end;

  size_t size() const { return start.size(); }
  template <typename F>
  void for_each_column(F&& f) {
    f(device);
    f(stream);
    f(name);
    f(start);
    f(end);
  }
};

// Iterations of the workload as the CPU saw them (ProfilerStep#N spans, NVTX step ranges,
// or inferred). The GPU side of a step is derived by analyses/steps.
struct Steps {
  std::vector<int64_t> number;        // N of ProfilerStep#N, or an ordinal
  std::vector<int32_t> source_index;  // index into Timeline::sources
  std::vector<int32_t> pid;
  std::vector<int32_t> tid;
  std::vector<TimeNs> start;  // CPU span
  std::vector<TimeNs> end;
  std::vector<StepSource> how;

  size_t size() const { return start.size(); }
  template <typename F>
  void for_each_column(F&& f) {
    f(number);
    f(source_index);
    f(pid);
    f(tid);
    f(start);
    f(end);
    f(how);
  }
};

// ---------------------------------------------------------------------------------------
// Descriptions.

// A GPU seen in the inputs. Kineto: deviceProperties[]. Fields not recorded stay -1/"".
struct Device {
  int32_t source_index = 0;  // input the device came from
  int32_t local_id = -1;     // device id inside that input (Kineto pid of GPU rows)
  std::string name;          // "NVIDIA H200"
  int64_t total_memory_bytes = -1;
  int32_t cc_major = -1, cc_minor = -1;
  int32_t num_sms = -1;
  int32_t max_threads_per_sm = -1;
  int32_t regs_per_sm = -1;
  int64_t shared_mem_per_sm = -1;
};

// One imported file.
struct Source {
  std::string path;
  std::string format;       // "kineto"
  TimeNs base_time_ns = 0;  // Kineto baseTimeNanoseconds
  int32_t rank = -1;        // distributedInfo.rank when present
  int32_t world_size = -1;
  std::string backend;        // distributedInfo.backend
  bool trace_window = false;  // a CUPTI trace of a window of the job (run --trace-steps, --trace-time)
};

// Names of processes and threads (Kineto M events).
struct ThreadName {
  int32_t pid, tid;
  std::string name;
};

// ---------------------------------------------------------------------------------------

struct Timeline {
  StringPool strings;
  GpuOps gpu_ops;
  CpuRanges cpu_ranges;
  OpInputs op_inputs;
  RuntimeCalls runtime_calls;
  SyncEvents sync_events;
  GpuAnnotations gpu_annotations;
  Steps steps;
  std::vector<Device> devices;
  std::vector<Source> sources;
  std::vector<ThreadName> thread_names;  // tid = -1 for process names

  // Sorts all tables by (start, end). Call once after importing.
  void finalize();
  // Total events in all tables.
  size_t event_count() const;
  // Approximate heap bytes held (capacity of all columns + strings).
  size_t memory_bytes() const;
  // Index of the device (source, local_id), adding an empty description when new.
  int16_t device_index(int32_t source_index, int32_t local_id);
};

}  // namespace chokepoint::timeline
