// The file the CUPTI tracer (`chokepoint run --trace`, src/tracer/cuda/) writes: one per
// process that initializes CUDA, `trace-<pid>.cptrace` in the recording directory,
// appended as CUPTI hands buffers over; with trace windows (tracer/window.h) one per
// window instead, `trace-<pid>-w<N>.cptrace` (N = 1, 2, ...; FileHeader::window). Read by importers/cupti/. No CUDA types here:
// the reader builds everywhere.
//
// Layout: a 64-byte FileHeader, then 64-byte Records. Every record is one activity
// (kernel, memcpy, memset, synchronization, runtime/driver API call, NVTX marker) except strings:
// a kString record (id, length) is followed by ceil(length / 64) blocks of its bytes,
// zero-padded, so a reader can still step through the file 64 bytes at a time. A string
// is written before the first record that names it. The file ends with a kEnd record
// when the process exits cleanly (flush at exit or on SIGINT/SIGTERM); without one the
// process died first and the reader says so. Integers are little-endian.
//
// Timestamps are CUPTI's (ns; CLOCK_REALTIME on Linux by default); the header keeps one
// (CLOCK_REALTIME, cuptiGetTimestamp) pair taken together at start so a reader can map
// CUPTI time onto the sampler's clock should the two differ.
#pragma once

#include <cstdint>

namespace chokepoint::tracer {

inline constexpr char kMagic[8] = {'C', 'P', 'T', 'R', 'A', 'C', 'E', '1'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr const char* kTraceFilePrefix = "trace-";
inline constexpr const char* kTraceFileSuffix = ".cptrace";
// Environment of the traced process: where to write, set by `run --trace`.
inline constexpr const char* kTraceDirEnv = "CHOKEPOINT_TRACE_DIR";

// Why a process has no trace (FileHeader::status, also printed once on its stderr).
enum class TraceStatus : uint32_t {
  kOk = 0,
  kOtherSubscriber = 1,  // another CUPTI client (torch.profiler, nsys, ncu) holds the process
  kCuptiError = 2,       // CUPTI refused to start for another reason
};

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t record_size;  // 64
  int64_t pid;
  int64_t realtime_ns;     // CLOCK_REALTIME ...
  int64_t cupti_ns;        // ... and cuptiGetTimestamp(), read together
  uint32_t status;         // TraceStatus
  uint32_t cupti_version;  // cuptiGetVersion()
  uint32_t window;         // 0: the whole process; N: the Nth trace window (its own file)
  uint8_t reserved[12];
};
static_assert(sizeof(FileHeader) == 64);

enum class RecordKind : uint8_t {
  kString = 1,
  kKernel = 2,
  kMemcpy = 3,
  kMemset = 4,
  kSync = 5,
  kRuntimeApi = 6,
  kDriverApi = 7,
  kDropped = 8,  // `start` = records CUPTI dropped (buffer full) for context `stream`
  kEnd = 9,      // clean end of the file; `start` = records written, `end` = dropped total,
                 // `sub` = kEndWindowCut when the process exited inside the window
  kDevice = 10,  // a GPU: `device` ordinal, `name`, `start` = memory bytes,
                 // `correlation` = SM count, `stream` = compute capability major * 10 + minor
  kMarker = 11,  // an NVTX marker: `sub` = kMarkerStart/End/Instant, `correlation` = the
                 // range's id (start and end share it), `start` = time, `stream` = thread
                 // id, `name` = the range's name (start records), marker.pid/domain
  kEvent = 12,   // a cudaEventRecord (CUPTI's CUDA_EVENT activity): `correlation` = the
                 // record call's, `stream` = the stream recorded on, `device`,
                 // event.sync_id = the id a stream-wait kSync that waited on it carries
                 // (since 2026-12-05; a reader that predates it counts it as unknown)
};

// Record::sub of a kEnd: the window was still open when the process exited (its file
// has what the process did until then; the window's steps were not all reached).
inline constexpr uint8_t kEndWindowCut = 1;

// Record::sub of a kMarker.
inline constexpr uint8_t kMarkerStart = 1;
inline constexpr uint8_t kMarkerEnd = 2;
inline constexpr uint8_t kMarkerInstant = 3;

// CUPTI's enums as the tracer copies them (cupti_activity.h, CUDA 13), named here for the
// importer that reads them; the tracer checks each against CUPTI's own at compile time
// (tracer/cuda/injection.cc). Record::sub of a memcpy: CUpti_ActivityMemcpyKind.
inline constexpr uint8_t kCopyHtoD = 1, kCopyDtoH = 2, kCopyDtoD = 8, kCopyHtoH = 9, kCopyPtoP = 10;
// Record::copy.src_kind/dst_kind: CUpti_ActivityMemoryKind.
inline constexpr uint8_t kMemoryPageable = 1, kMemoryPinned = 2, kMemoryDevice = 3, kMemoryArray = 4,
                         kMemoryManaged = 5;
// Record::sub of a synchronization: CUpti_ActivitySynchronizationType.
inline constexpr uint8_t kSyncEvent = 1, kSyncStreamWaitEvent = 2, kSyncStream = 3, kSyncContext = 4;
inline constexpr uint8_t kFlagAsync = 0x1;

struct Record {
  uint8_t kind;          // RecordKind
  uint8_t device;        // CUDA device ordinal (kernel, memcpy, memset)
  uint8_t flags;         // memcpy: kFlagAsync
  uint8_t sub;           // memcpy: copy kind; sync: type
  uint32_t name;         // string id: kernel or API function name; 0 none. kString: its id
  uint64_t start;        // ns (kString: byte length)
  uint64_t end;          // ns
  uint32_t correlation;  // CUPTI correlation id (links an API call to its GPU work)
  uint32_t stream;       // stream id; API calls: thread id
  union {
    struct {
      int32_t grid[3];
      int32_t block[3];
      int32_t shared_bytes;  // static + dynamic, per block
      uint16_t registers;    // per thread
      uint16_t pad;
    } kernel;
    struct {
      uint64_t bytes;
      uint8_t src_kind;  // memset: the memory kind set
      uint8_t dst_kind;
      uint8_t pad[22];
    } copy;
    struct {
      uint32_t pid;
      int32_t cbid;     // CUPTI callback id
      uint32_t result;  // the call's return value
      uint8_t pad[20];
    } api;
    struct {
      uint32_t pid;
      uint32_t domain;  // string id of the NVTX domain, 0 the default domain
      uint8_t pad[24];
    } marker;
    struct {
      // kSync of an event (wait or synchronize) and kEvent: CUPTI's cudaEventSyncId, which
      // ties a wait to the record it waited on (an event is recorded many times; this id is
      // one recording). 0 or 0xFFFFFFFF: none (files written before 2026-12-05 have 0).
      uint64_t sync_id;
      uint32_t event_id;  // CUPTI's id of the event object
      uint8_t pad[20];
    } event;
    uint8_t raw[32];
  };
};
static_assert(sizeof(Record) == 64);

}  // namespace chokepoint::tracer
