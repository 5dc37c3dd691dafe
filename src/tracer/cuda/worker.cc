// The tracer's own thread (collect.h): converts CUPTI's filled buffers and finishes the
// trace on a fatal signal, so neither runs on the application's threads.
//
// CUPTI calls buffer_completed on its own thread, but may also call it on the thread
// that fills a per-thread buffer or that asks for a flush (CUDA 13 keeps activity buffers
// per thread by default): the conversion (a record copied, its name interned, the file
// written; ~115 ns a record on the H200) must not land on the application's launching
// thread. buffer_completed only queues the buffer; this thread does the rest. (On the
// H200 a launch-bound PyTorch job had 0 of 4 buffers completed on its main thread, so
// this guards rather than speeds up: docs/BENCHMARKS.md "Tracer cost per launch".)
//
// A fatal signal's handler only records the signal (async-signal-safe); this thread then
// finishes the trace and re-raises it. Finishing in the handler could deadlock on a lock
// the interrupted thread holds (a window's, the file's, this queue's).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "tracer/cuda/collect.h"

namespace chokepoint::tracer::cuda {
namespace {

// Allocated once and never destroyed: the thread is detached, and the process's exit
// must not destroy a condition variable it waits on.
struct Worker {
  std::mutex mu;
  std::condition_variable wake;     // a buffer queued, or a signal to handle
  std::condition_variable drained;  // the queue ran empty
  std::deque<FilledBuffer> queue;
  size_t busy = 0;                    // buffers taken off the queue, not yet processed
  std::atomic<std::thread::id> id{};  // set by the thread itself, first thing
};
Worker* g_worker = nullptr;
std::atomic<int> g_signal{0};
pid_t g_owner = 0;  // the process whose thread this is (a forked child has none)

// The handler's poll interval: how late a signal's flush may start.
constexpr auto kSignalPoll = std::chrono::milliseconds(20);

// Processes what is queued, on the calling thread (the worker, or a drain on it).
void process_queue(std::unique_lock<std::mutex>& lock) {
  while (!g_worker->queue.empty()) {
    const FilledBuffer b = g_worker->queue.front();
    g_worker->queue.pop_front();
    ++g_worker->busy;
    lock.unlock();
    process_buffer(b);
    lock.lock();
    --g_worker->busy;
  }
  g_worker->drained.notify_all();
}

void run() {
  g_worker->id = std::this_thread::get_id();
  std::unique_lock<std::mutex> lock(g_worker->mu);
  for (;;) {
    g_worker->wake.wait_for(lock, kSignalPoll, [] { return !g_worker->queue.empty() || g_signal != 0; });
    process_queue(lock);
    if (const int sig = g_signal.exchange(0); sig != 0) {
      lock.unlock();
      finish_on_signal(sig);  // returns only when the process is exiting already
      lock.lock();
    }
  }
}

}  // namespace

bool on_worker_thread() { return g_worker != nullptr && std::this_thread::get_id() == g_worker->id.load(); }

void start_worker() {
  g_worker = new Worker;  // NOLINT(cppcoreguidelines-owning-memory): lives until the process ends
  g_owner = getpid();
  std::thread(run).detach();
}

void hand_over(const FilledBuffer& b) {
  if (g_worker == nullptr || getpid() != g_owner) {
    process_buffer(b);  // before the worker started, or in a forked child
    return;
  }
  {
    std::lock_guard<std::mutex> lock(g_worker->mu);
    g_worker->queue.push_back(b);
  }
  g_worker->wake.notify_one();
}

void drain() {
  if (g_worker == nullptr || getpid() != g_owner) return;
  std::unique_lock<std::mutex> lock(g_worker->mu);
  if (on_worker_thread()) {
    process_queue(lock);
    return;
  }
  g_worker->wake.notify_one();
  g_worker->drained.wait(lock, [] { return g_worker->queue.empty() && g_worker->busy == 0; });
}

bool request_signal_finish(int sig) {
  if (g_worker == nullptr || getpid() != g_owner) return false;
  g_signal = sig;
  return true;
}

}  // namespace chokepoint::tracer::cuda
