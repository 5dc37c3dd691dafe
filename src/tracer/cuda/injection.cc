// libchokepoint_tracer.so: the CUPTI injection library of `chokepoint run --trace`.
//
// CUDA loads it at initialization when CUDA_INJECTION64_PATH names it and calls
// InitializeInjection() (docs/FORMATS.md "CUPTI"; NVIDIA's cupti_trace_injection sample
// has the same shape). It enables the activity kinds the analyses need (devices,
// kernels, memcpy, memset, synchronizations, NVTX markers, the runtime and driver API
// calls the analyses read), and CUPTI hands filled buffers to buffer_completed() on
// its own thread (or, with per-thread buffers, on the thread that filled one): the buffer
// is queued for the tracer's worker thread (worker.cc), which copies each record into the
// fixed-size form of trace_format.h and writes it. The application's threads only pay
// CUPTI's own cost.
// At exit (and on SIGTERM or SIGINT when the process has no handler of its own: the worker
// then finishes and re-raises the signal) the buffers are flushed and the file closed with
// its kEnd record.
//
// Trace windows (`run --trace-steps`, `--trace-time`, `--trace=on-demand`;
// tracer/window.h): collection is switched on only inside a window, each window into a
// file of its own; windows.cc decides when.
//
// Only one CUPTI subscriber per process (before CUDA 13.3): when torch.profiler, nsys or
// ncu already holds the process, this says so in one line and writes a header saying
// so; the live sampling of `run` goes on.
#include <cupti.h>
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include <vector>

#include "timeline/api_class.h"
#include "tracer/cuda/collect.h"
#include "tracer/trace_writer.h"
#include "tracer/window.h"

namespace {

using chokepoint::tracer::FileHeader;
using chokepoint::tracer::Record;
using chokepoint::tracer::RecordKind;
using chokepoint::tracer::TraceStatus;
using chokepoint::tracer::TraceWriter;

// The .cptrace file copies CUPTI's enum values; trace_format.h names them for the importer.
namespace tf = chokepoint::tracer;
static_assert(tf::kCopyHtoD == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && tf::kCopyDtoH == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH &&
              tf::kCopyDtoD == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD && tf::kCopyHtoH == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH &&
              tf::kCopyPtoP == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
static_assert(tf::kMemoryPageable == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE &&
              tf::kMemoryPinned == CUPTI_ACTIVITY_MEMORY_KIND_PINNED &&
              tf::kMemoryDevice == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE &&
              tf::kMemoryArray == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY &&
              tf::kMemoryManaged == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
static_assert(tf::kSyncEvent == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE &&
              tf::kSyncStreamWaitEvent == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT &&
              tf::kSyncStream == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE &&
              tf::kSyncContext == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);

// 8 MiB buffers: ~100k kernel records each; CUPTI asks for more as they fill.
// CHOKEPOINT_TRACE_BUFFER_MB changes it (for measuring: docs/BENCHMARKS.md "Tracer cost
// per launch").
constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kBufferAlign = 8;
size_t g_buffer_bytes = kBufferBytes;
// CHOKEPOINT_TRACE_CONVERT=0: records walked, not converted nor written (what the
// conversion costs; the file then holds no records).
bool g_convert = true;
// CHOKEPOINT_TRACE_EVENTS=0 leaves CUDA_EVENT records out (a measuring knob: what they cost
// per cudaEventRecord, docs/BENCHMARKS.md "Event records"); the replay then reads each
// stream wait's event from the launch order.
bool g_events = true;
// CHOKEPOINT_TRACE_STATS=1: at the end, one line on where and how long buffers were
// processed (the figures of docs/BENCHMARKS.md "Tracer cost per launch").
struct Stats {
  std::atomic<uint64_t> buffers{0}, on_main{0}, records{0}, convert_ns{0};
};
Stats* g_stats = nullptr;

std::mutex g_file_mu;  // the file records go to (none between windows)
TraceWriter* g_writer = nullptr;
uint64_t g_dropped = 0;  // in the current file
std::string g_dir;
CUpti_SubscriberHandle g_subscriber = nullptr;
struct sigaction g_old_term {
}, g_old_int{};

// The GPUs as CUDA reported them (once each, at context creation), for the files of the
// windows after the first: their records went into an earlier file.
struct Device {
  Record record;
  std::string name;
};
std::vector<Device> g_devices;

// The API records the trace takes (enable_api): the same list on at every window.
struct ApiSelection {
  CUpti_ActivityKind kind;
  CUptiResult(CUPTIAPI* enable)(CUpti_CallbackId, uint8_t);
  bool all;
  std::vector<CUpti_CallbackId> ids;     // the calls the trace takes
  std::vector<CUpti_CallbackId> others;  // the rest
};
std::vector<ApiSelection> g_api;
// How a window switches the API records on: per call (cuptiActivityEnableRuntimeApi for
// each call taken: what the whole-process trace does at start), or the activity kind and
// then each other call off. Per call alone, switched on after CUDA started, recorded no
// API call on the H200 (CUDA 13.0, driver 580): docs/FORMATS.md "CUPTI".
bool g_api_by_kind = true;

using chokepoint::tracer::cuda::note;

uint8_t kind_of(RecordKind k) { return static_cast<uint8_t>(k); }

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, g_buffer_bytes));
  *size = *buffer != nullptr ? g_buffer_bytes : 0;
  *max_records = 0;
}

Record device_record(const CUpti_ActivityDevice5* d) {
  Record r{};
  r.kind = kind_of(RecordKind::kDevice);
  r.device = static_cast<uint8_t>(d->id);
  r.start = d->globalMemorySize;
  r.correlation = d->numMultiprocessors;
  r.stream = d->computeCapabilityMajor * 10 + d->computeCapabilityMinor;
  return r;
}

void remember_device(const Record& r, const char* name) {
  for (const Device& d : g_devices) {
    if (d.record.device == r.device) return;
  }
  g_devices.push_back({r, name != nullptr ? name : ""});
}

// Between windows only device records arrive (the one kind left on): kept for the next file.
void keep_devices(uint8_t* buffer, size_t valid) {
  CUpti_Activity* a = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
    if (a->kind != CUPTI_ACTIVITY_KIND_DEVICE) continue;
    const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(a);
    remember_device(device_record(d), d->name);
  }
}

void convert(TraceWriter& w, CUpti_Activity* a) {
  Record r{};
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      r.kind = kind_of(RecordKind::kKernel);
      r.device = static_cast<uint8_t>(k->deviceId);
      r.name = w.intern(k->name != nullptr ? k->name : "");
      r.start = k->start;
      r.end = k->end;
      r.correlation = k->correlationId;
      r.stream = k->streamId;
      r.kernel.grid[0] = k->gridX;
      r.kernel.grid[1] = k->gridY;
      r.kernel.grid[2] = k->gridZ;
      r.kernel.block[0] = k->blockX;
      r.kernel.block[1] = k->blockY;
      r.kernel.block[2] = k->blockZ;
      r.kernel.shared_bytes = k->staticSharedMemory + k->dynamicSharedMemory;
      r.kernel.registers = k->registersPerThread;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
      r.kind = kind_of(RecordKind::kMemcpy);
      r.device = static_cast<uint8_t>(m->deviceId);
      r.flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? chokepoint::tracer::kFlagAsync : 0;
      r.sub = m->copyKind;
      r.start = m->start;
      r.end = m->end;
      r.correlation = m->correlationId;
      r.stream = m->streamId;
      r.copy.bytes = m->bytes;
      r.copy.src_kind = m->srcKind;
      r.copy.dst_kind = m->dstKind;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
      r.kind = kind_of(RecordKind::kMemset);
      r.device = static_cast<uint8_t>(m->deviceId);
      r.start = m->start;
      r.end = m->end;
      r.correlation = m->correlationId;
      r.stream = m->streamId;
      r.copy.bytes = m->bytes;
      r.copy.dst_kind = static_cast<uint8_t>(m->memoryKind);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(a);
      r.kind = kind_of(RecordKind::kSync);
      r.sub = static_cast<uint8_t>(s->type);
      r.start = s->start;
      r.end = s->end;
      r.correlation = s->correlationId;
      r.stream = s->streamId;
      r.event.sync_id = s->cudaEventSyncId;
      r.event.event_id = s->cudaEventId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      // Without it a stream wait says only which stream waited; with it, on what.
      const auto* e = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(a);
      r.kind = kind_of(RecordKind::kEvent);
      r.device = static_cast<uint8_t>(e->deviceId);
      r.correlation = e->correlationId;
      r.stream = e->streamId;
      r.event.sync_id = e->cudaEventSyncId;
      r.event.event_id = e->eventId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(a);
      const bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      r.kind = kind_of(runtime ? RecordKind::kRuntimeApi : RecordKind::kDriverApi);
      const char* name = nullptr;
      cuptiGetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid, &name);
      r.name = w.intern(name != nullptr ? name : "");
      r.start = api->start;
      r.end = api->end;
      r.correlation = api->correlationId;
      r.stream = api->threadId;
      r.api.pid = api->processId;
      r.api.cbid = static_cast<int32_t>(api->cbid);
      r.api.result = api->returnValue;
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(a);
      r = device_record(d);
      remember_device(r, d->name);
      r.name = w.intern(d->name != nullptr ? d->name : "");
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      // NVTX push/pop and start/end ranges arrive as a start and an end record sharing an
      // id; the end record has no name.
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(a);
      r.kind = kind_of(RecordKind::kMarker);
      r.sub = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) ? chokepoint::tracer::kMarkerStart
              : (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? chokepoint::tracer::kMarkerEnd
                                                            : chokepoint::tracer::kMarkerInstant;
      r.name = m->name != nullptr ? w.intern(m->name) : 0;
      r.start = m->timestamp;
      r.correlation = m->id;
      if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        r.stream = m->objectId.pt.threadId;
        r.marker.pid = m->objectId.pt.processId;
      }
      r.marker.domain = m->domain != nullptr && *m->domain != '\0' ? w.intern(m->domain) : 0;
      break;
    }
    default: return;
  }
  w.add(r);
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  if (g_stats) {
    g_stats->buffers.fetch_add(1, std::memory_order_relaxed);
    if (gettid() == getpid()) g_stats->on_main.fetch_add(1, std::memory_order_relaxed);
  }
  chokepoint::tracer::cuda::hand_over({ctx, stream_id, buffer, valid});
}

pid_t g_pid = 0;  // the process that initialized CUDA

// 0: not finished; 1: a thread is finishing; 2: done.
std::atomic<int> g_finish_state{0};

// Completes the trace, once; true for the caller that did. A second caller on another
// thread (the process exiting while the worker handles a signal) waits until the file is
// complete, up to 5 s; the worker itself never waits (the exiting thread may be waiting
// for it to drain the queue), and goes back to draining.
bool finish_once() {
  // A child forked without exec that exits normally inherits this handler, not the
  // control thread nor the right to finish the parent's file.
  if (getpid() != g_pid) return false;
  int expected = 0;
  if (!g_finish_state.compare_exchange_strong(expected, 1)) {
    for (int i = 0; i < 500 && g_finish_state.load() != 2 && !chokepoint::tracer::cuda::on_worker_thread(); ++i) {
      usleep(10'000);
    }
    return false;
  }
  chokepoint::tracer::cuda::stop_windows();
  if (g_stats) {
    chokepoint::tracer::cuda::note("stats: " + std::to_string(g_stats->buffers.load()) + " buffers (" +
                                   std::to_string(g_stats->on_main.load()) + " completed on the main thread), " +
                                   std::to_string(g_stats->records.load()) + " records converted in " +
                                   std::to_string(g_stats->convert_ns.load() / 1'000'000) + " ms");
  }
  g_finish_state = 2;
  return true;
}

void finish() { finish_once(); }

// SIGTERM or SIGINT with no handler of the application's (a C++ program; Python handles
// SIGINT itself and exits through atexit): the tracer's worker thread flushes, then the
// process dies of the signal as the default action would. The handler itself only hands
// the signal over: flushing here could deadlock on a lock the interrupted thread holds.
void on_fatal_signal(int sig) {
  if (chokepoint::tracer::cuda::request_signal_finish(sig)) return;
  sigaction(sig, sig == SIGINT ? &g_old_int : &g_old_term, nullptr);  // no worker: die now
  raise(sig);
}

void flush_on(int sig, struct sigaction* old) {
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, old);
}

bool env_is(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] == '1';
}

bool env_is_zero(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] == '0';
}

// Only the API calls the analyses read (launches, copies, memsets, synchronizations,
// allocations: timeline/api_class.h): PyTorch makes ~12 runtime calls per kernel
// (cudaGetDevice, cudaGetLastError ...), and recording all of them cost launch_bound
// 1.42x its step time on the H200 (docs/BENCHMARKS.md). `all` records every call.
// Chosen once at start (naming ~1,000 callback ids); switched at every window.
using EnableFn = CUptiResult(CUPTIAPI*)(CUpti_CallbackId, uint8_t);
void select_api(CUpti_CallbackDomain domain, int size, CUpti_ActivityKind kind, EnableFn enable, bool all) {
  ApiSelection& s = g_api.emplace_back(ApiSelection{kind, enable, all, {}, {}});
  if (all) return;
  for (int cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, static_cast<uint32_t>(cbid), &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const bool taken = chokepoint::timeline::classify_api(name) != chokepoint::timeline::ApiClass::kOther;
    (taken ? s.ids : s.others).push_back(static_cast<CUpti_CallbackId>(cbid));
  }
}

void switch_api(bool on) {
  for (const ApiSelection& s : g_api) {
    if (s.all || g_api_by_kind) {
      if (on) cuptiActivityEnable(s.kind);
      if (!on) cuptiActivityDisable(s.kind);
      if (on && !s.all) {
        for (CUpti_CallbackId id : s.others) s.enable(id, 0);
      }
      continue;
    }
    for (CUpti_CallbackId id : s.ids) s.enable(id, on ? 1 : 0);
  }
}

// The buffers: the defaults unless the measuring knobs say otherwise (docs/BENCHMARKS.md
// "Tracer cost per launch": CHOKEPOINT_TRACE_BUFFER_MB, CHOKEPOINT_TRACE_PINNED=1,
// CHOKEPOINT_TRACE_PER_THREAD=0, CHOKEPOINT_TRACE_CONVERT=0).
void tune_buffers() {
  if (const char* mb = std::getenv("CHOKEPOINT_TRACE_BUFFER_MB")) {
    const long v = std::strtol(mb, nullptr, 10);
    if (v >= 1 && v <= 256) g_buffer_bytes = static_cast<size_t>(v) << 20;
  }
  g_convert = !env_is_zero("CHOKEPOINT_TRACE_CONVERT");
  g_events = !env_is_zero("CHOKEPOINT_TRACE_EVENTS");
  size_t device_bytes = kBufferBytes;
  size_t size = sizeof device_bytes;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &device_bytes);
  if (env_is("CHOKEPOINT_TRACE_PINNED")) {
    uint8_t pinned = 1;
    size = sizeof pinned;
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &size, &pinned);
  }
  // CUPTI's default (per-thread buffers) unless CHOKEPOINT_TRACE_PER_THREAD=0: the H200
  // showed no difference beyond its noise (docs/BENCHMARKS.md "Tracer cost per launch").
  if (env_is_zero("CHOKEPOINT_TRACE_PER_THREAD")) {
    uint8_t per_thread = 0;
    size = sizeof per_thread;
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &per_thread);
  }
}

// The window's spec from the environment; the whole process when it is malformed (said).
chokepoint::tracer::WindowSpec window_spec() {
  const char* text = std::getenv(chokepoint::tracer::kTraceWindowEnv);
  std::string error;
  auto spec = chokepoint::tracer::parse_window_spec(text != nullptr ? text : "", &error);
  if (spec) return *spec;
  note(error + ": tracing the whole process");
  return {};
}

FileHeader header(TraceStatus status, uint32_t window = 0) {
  FileHeader h{};
  std::memcpy(h.magic, chokepoint::tracer::kMagic, sizeof h.magic);
  h.version = chokepoint::tracer::kFormatVersion;
  h.record_size = sizeof(Record);
  h.pid = getpid();
  uint64_t cupti_ns = 0;
  cuptiGetTimestamp(&cupti_ns);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  h.realtime_ns = static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  h.cupti_ns = static_cast<int64_t>(cupti_ns);
  h.status = static_cast<uint32_t>(status);
  uint32_t version = 0;
  cuptiGetVersion(&version);
  h.cupti_version = version;
  h.window = window;
  return h;
}

// A file that says why there is no trace, so `analyze` can say it too.
void write_status_only(const char* dir, TraceStatus status) {
  std::string error;
  auto w = TraceWriter::create(dir, header(status), &error);
  if (w) w->finish(0);
}

}  // namespace

namespace chokepoint::tracer::cuda {

void note(const std::string& text) {
  std::fprintf(stderr, "chokepoint tracer (pid %d): %s\n", static_cast<int>(getpid()), text.c_str());
}

// Everything but the device records, on at every window.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,     CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_CUDA_EVENT, CUPTI_ACTIVITY_KIND_MARKER};

void set_collection(bool on) {
  for (CUpti_ActivityKind k : kKinds) {
    if (k == CUPTI_ACTIVITY_KIND_CUDA_EVENT && !g_events) continue;
    if (on) cuptiActivityEnable(k);
    if (!on) cuptiActivityDisable(k);
  }
  switch_api(on);
}

bool open_trace_file(uint32_t window) {
  std::string error;
  auto w = TraceWriter::create(g_dir, header(TraceStatus::kOk, window), &error);
  if (!w) {
    note(error);
    return false;
  }
  std::lock_guard<std::mutex> lock(g_file_mu);
  for (const Device& d : g_devices) {
    Record r = d.record;
    r.name = w->intern(d.name);
    w->add(r);
  }
  delete g_writer;  // none normally: the previous file was completed
  g_writer = w.release();
  g_dropped = 0;
  return true;
}

void process_buffer(const FilledBuffer& b) {
  {
    std::lock_guard<std::mutex> file_lock(g_file_mu);
    if (g_writer != nullptr) {
      const auto t0 = g_stats ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      uint64_t records = 0;
      std::lock_guard<std::mutex> lock(g_writer->mutex());
      CUpti_Activity* a = nullptr;
      while (cuptiActivityGetNextRecord(b.buffer, b.valid, &a) == CUPTI_SUCCESS) {
        if (g_convert) convert(*g_writer, a);
        ++records;
      }
      size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(b.context, b.stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
        g_dropped += dropped;
        Record r{};
        r.kind = kind_of(RecordKind::kDropped);
        r.start = dropped;
        r.stream = b.stream;
        g_writer->add(r);
      }
      g_writer->flush();
      if (g_stats) {
        g_stats->records += records;
        g_stats->convert_ns += static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      }
    } else {
      keep_devices(b.buffer, b.valid);
    }
  }
  std::free(b.buffer);
}

void finish_on_signal(int sig) {
  if (!finish_once()) return;  // the process is exiting already: it completes the trace
  sigaction(sig, sig == SIGINT ? &g_old_int : &g_old_term, nullptr);
  raise(sig);
  _exit(128 + sig);  // the signal is blocked on this thread: exit as the shell reports a signal
}

void close_trace_file(bool cut) {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drain();  // the worker converts what the flush handed over, into this file
  std::lock_guard<std::mutex> lock(g_file_mu);
  if (g_writer == nullptr) return;
  {
    std::lock_guard<std::mutex> writer_lock(g_writer->mutex());
    g_writer->finish(g_dropped, cut);
  }
  delete g_writer;
  g_writer = nullptr;
}

}  // namespace chokepoint::tracer::cuda

// NVTX ranges (torch.cuda.nvtx, nvtx.annotate, NVTX in C++): NVTX loads the library named
// in NVTX_INJECTION64_PATH at its first call and calls InitializeInjectionNvtx2; `run
// --trace` names this library there, and this hands the call to CUPTI's own NVTX
// injection (in the libcupti this library is linked to), whose MARKER records then
// arrive with the other activity. Ranges opened before CUDA initializes have no start
// record (the activity kind is enabled in InitializeInjection); the importer counts them.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &info) == 0 || info.dli_fname == nullptr) return 0;
  void* cupti = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (cupti == nullptr) return 0;
  using InitFn = int (*)(const void*);
  auto init = reinterpret_cast<InitFn>(dlsym(cupti, "InitializeInjectionNvtx2"));
  return init != nullptr ? init(get_export_table) : 0;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* dir = std::getenv(chokepoint::tracer::kTraceDirEnv);
  if (dir == nullptr || *dir == '\0') return 1;  // loaded outside `chokepoint run --trace`

  const CUptiResult sub = cuptiSubscribe(&g_subscriber, chokepoint::tracer::cuda::window_callback, nullptr);
  if (sub != CUPTI_SUCCESS) {
    const bool other = sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    note(other ? "another CUPTI client (torch.profiler, nsys or ncu) holds this process: no CUDA trace from it; "
                 "live sampling goes on"
               : "CUPTI would not start: no CUDA trace from this process; live sampling goes on");
    write_status_only(dir, other ? TraceStatus::kOtherSubscriber : TraceStatus::kCuptiError);
    return 1;
  }
  g_dir = dir;
  g_pid = getpid();
  // Linux thread ids (gettid), as /proc and the sampler know them: CUPTI's default is
  // pthread_self(), which the first GPU run showed as a truncated pointer.
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  tune_buffers();
  if (env_is("CHOKEPOINT_TRACE_STATS"))
    g_stats = new Stats;  // NOLINT(cppcoreguidelines-owning-memory): process lifetime
  chokepoint::tracer::cuda::start_worker();
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
    note("CUPTI refused the activity buffers: no CUDA trace from this process");
    return 1;
  }
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
  // CHOKEPOINT_TRACE_API=0: GPU activity alone, no API calls (what CUPTI's kernel records
  // cost without them; docs/BENCHMARKS.md). The analyses then have no launch threads.
  if (!env_is_zero("CHOKEPOINT_TRACE_API")) {
    select_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_ACTIVITY_KIND_RUNTIME,
               cuptiActivityEnableRuntimeApi, env_is("CHOKEPOINT_TRACE_ALL_API"));
    // Driver API launches too: cuBLASLt, cuDNN and Triton (torch.compile) kernels are
    // launched through cuLaunchKernelEx, and without their launch a kernel has no CPU thread
    // or step. CUPTI records no driver calls made inside runtime calls, so nothing doubles
    // (healthy_bf16 on the H200: 27,792 runtime + 7,280 driver launches = 35,072 kernels).
    // CHOKEPOINT_TRACE_DRIVER=0 leaves them out.
    if (!env_is_zero("CHOKEPOINT_TRACE_DRIVER")) {
      select_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, CUPTI_ACTIVITY_KIND_DRIVER,
                 cuptiActivityEnableDriverApi, env_is("CHOKEPOINT_TRACE_ALL_API"));
    }
  }
  const chokepoint::tracer::WindowSpec spec = window_spec();
  const char* api_switch = std::getenv("CHOKEPOINT_TRACE_API_SWITCH");  // cbid | kind: for measuring
  g_api_by_kind = api_switch != nullptr ? std::strcmp(api_switch, "kind") == 0
                                        : spec.kind != chokepoint::tracer::WindowSpec::Kind::kWhole;
  chokepoint::tracer::cuda::start_windows(spec, dir, g_subscriber);
  std::atexit(finish);
  flush_on(SIGTERM, &g_old_term);
  flush_on(SIGINT, &g_old_int);
  return 1;
}
