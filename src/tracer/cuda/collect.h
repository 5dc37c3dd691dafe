// Between the parts of the injection library: injection.cc owns CUPTI's activity
// buffers and the trace file they go to; worker.cc converts the filled buffers on a
// thread of its own and finishes the trace on a fatal signal; windows.cc decides when
// (tracer/window.h) and serves `chokepoint trace` (tracer/control.h).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

#include "tracer/window.h"

namespace chokepoint::tracer::cuda {

// One line on the job's stderr, "chokepoint tracer (pid N): TEXT".
void note(const std::string& text);

// The trace's activity kinds and API records on or off (the device records stay on: CUDA
// reports a GPU once, when its context is created).
void set_collection(bool on);
// Records go to the file of window `window` (0: the whole process) from now on; false
// (said) when it cannot be created.
bool open_trace_file(uint32_t window);
// Delivers what CUPTI still holds (a forced flush) into the current file and completes
// it; `cut`: the process is exiting inside the file's window.
void close_trace_file(bool cut);

// A buffer CUPTI has filled, as buffer_completed received it.
struct FilledBuffer {
  CUcontext context;
  uint32_t stream;
  uint8_t* buffer;
  size_t valid;
};
// injection.cc: converts a filled buffer's records into the current file (or keeps the
// device records between windows) and frees it.
void process_buffer(const FilledBuffer& b);
// injection.cc: finishes the trace after a fatal signal and dies of it (on the worker);
// returns only when the process is already exiting through its own finish.
void finish_on_signal(int sig);

// worker.cc: starts the thread; until then (and in a forked child) hand_over processes
// the buffer on the caller's thread.
void start_worker();
// Queues a filled buffer for the worker (buffer_completed, on whatever thread CUPTI calls it).
void hand_over(const FilledBuffer& b);
// Returns once every buffer handed over so far is processed.
void drain();
// Whether the caller is the worker thread.
bool on_worker_thread();
// From a signal handler (async-signal-safe): the worker finishes the trace and re-raises
// `sig`; false when there is no worker to do it.
bool request_signal_finish(int sig);

// windows.cc: starts the windows of `spec` (the whole process opens at once; the others
// get a control thread, and on demand a control socket in `dir`).
void start_windows(const WindowSpec& spec, const std::string& dir, CUpti_SubscriberHandle subscriber);
// The subscriber's callbacks (step starts: NVTX ranges, host synchronizations).
void CUPTIAPI window_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);
// At exit: closes the window that is open (kept, marked cut) and the control socket.
void stop_windows();

}  // namespace chokepoint::tracer::cuda
