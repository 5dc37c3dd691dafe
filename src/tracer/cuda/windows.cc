// When the injection library collects (tracer/window.h): the plan is fed step starts
// from CUPTI callbacks and the clock from a control thread, and its decisions switch
// collection on and off. Outside a window the only callbacks enabled are the few that
// count steps (NVTX range starts, cudaDeviceSynchronize and cudaStreamSynchronize), and
// only while the plan needs steps; a timed or on-demand job has none between windows.
#include <generated_nvtx_meta.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "timeline/step_name.h"
#include "tracer/control.h"
#include "tracer/cuda/collect.h"
#include "tracer/trace_writer.h"

namespace chokepoint::tracer::cuda {
namespace {

// The control thread's tick: the resolution of timed windows and how soon a closed
// window's file is written. 20 wake-ups a second of one sleeping thread.
constexpr int kTickMs = 50;
// After a window closes, its last step's kernels still run: their records are waited
// for this long before the forced flush that completes the file.
constexpr auto kDrain = std::chrono::milliseconds(200);

std::mutex g_mu;  // the plan and what it decides
std::optional<WindowPlan> g_plan;
WindowSpec g_spec;
std::string g_dir;
CUpti_SubscriberHandle g_sub = nullptr;
bool g_steps_on = false;
std::atomic<bool> g_close_pending{false};
std::atomic<bool> g_stop{false};
std::thread g_thread;
std::unique_ptr<ControlServer> g_server;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr CUpti_CallbackId kNvtxStarts[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA,   CUPTI_CBID_NVTX_nvtxRangePushEx,       CUPTI_CBID_NVTX_nvtxRangeStartA,
    CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx};
constexpr CUpti_CallbackId kSyncs[] = {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
                                       CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                                       CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000};

// Under g_mu.
void step_callbacks(bool on) {
  if (on == g_steps_on) return;
  g_steps_on = on;
  for (CUpti_CallbackId id : kNvtxStarts) cuptiEnableCallback(on ? 1 : 0, g_sub, CUPTI_CB_DOMAIN_NVTX, id);
  for (CUpti_CallbackId id : kSyncs) cuptiEnableCallback(on ? 1 : 0, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
}

uint32_t file_window() {
  return g_spec.kind == WindowSpec::Kind::kWhole ? 0 : static_cast<uint32_t>(g_plan->windows());
}

// Under g_mu: carries out what the plan decided.
void apply(WindowAction a) {
  if (a == WindowAction::kOpen && open_trace_file(file_window())) set_collection(true);
  if (a == WindowAction::kClose) {
    set_collection(false);
    g_close_pending = true;
  }
  step_callbacks(g_plan->wants_steps());
}

const char* ascii(const nvtxEventAttributes_t* a) {
  return a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : nullptr;
}

// The name of the range an NVTX start callback opens; nullptr when it has none in ASCII.
const char* range_name(CUpti_CallbackId cbid, const void* params) {
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: return static_cast<const nvtxRangePushA_params*>(params)->message;
    case CUPTI_CBID_NVTX_nvtxRangeStartA: return static_cast<const nvtxRangeStartA_params*>(params)->message;
    case CUPTI_CBID_NVTX_nvtxRangePushEx: return ascii(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib);
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return ascii(static_cast<const nvtxRangeStartEx_params*>(params)->eventAttrib);
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      return ascii(static_cast<const nvtxDomainRangePushEx_params*>(params)->core.eventAttrib);
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      return ascii(static_cast<const nvtxDomainRangeStartEx_params*>(params)->core.eventAttrib);
    default: return nullptr;
  }
}

// A step starts with this callback: which signal, nullopt when it is not a step start.
std::optional<StepSignal> step_signal(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    const char* name = range_name(cbid, static_cast<const CUpti_NvtxData*>(cbdata)->functionParams);
    int64_t number = 0;
    if (name == nullptr || !timeline::step_range_number(name, &number)) return std::nullopt;
    return StepSignal::kNvtx;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      static_cast<const CUpti_CallbackData*>(cbdata)->callbackSite == CUPTI_API_EXIT) {
    return StepSignal::kSync;  // the step ends when the synchronization returns
  }
  return std::nullopt;
}

// On the control thread: waits for the last kernels, completes the closed window's file,
// and lets the next window open.
void complete_closed_window() {
  std::this_thread::sleep_for(kDrain);
  close_trace_file(false);
  std::lock_guard<std::mutex> lock(g_mu);
  g_plan->on_flushed();
  apply(g_plan->on_time(now_ns()));
}

std::string request_reply(std::string_view line) {
  const auto r = parse_control_request(line);
  if (!r) return "error bad request '" + std::string(line.substr(0, 64)) + "' (expected 'steps N' or 'duration NS')";
  std::lock_guard<std::mutex> lock(g_mu);
  const std::string why = g_plan->request(r->steps, r->duration_ns, now_ns());
  if (!why.empty()) return "error " + why;
  apply(g_plan->on_time(now_ns()));  // a timed window opens now
  const auto n = static_cast<uint32_t>(g_plan->windows() + (g_plan->open() ? 0 : 1));
  std::string reply = "ok window " + std::to_string(n);
  reply += r->steps > 0 ? " opens at the next step start" : " is open";
  return reply + "; its trace: " + trace_file_path(g_dir, getpid(), n);
}

void control_loop() {
  while (!g_stop) {
    if (g_server) {
      g_server->serve_one(kTickMs, request_reply);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs));
    }
    {
      std::lock_guard<std::mutex> lock(g_mu);
      apply(g_plan->on_time(now_ns()));
    }
    if (g_close_pending.exchange(false)) complete_closed_window();
  }
}

}  // namespace

void start_windows(const WindowSpec& spec, const std::string& dir, CUpti_SubscriberHandle subscriber) {
  g_spec = spec;
  g_dir = dir;
  g_sub = subscriber;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_plan.emplace(spec, now_ns());
    apply(g_plan->on_time(now_ns()));  // the whole process: open from here on
  }
  if (spec.kind == WindowSpec::Kind::kWhole) return;
  if (spec.kind == WindowSpec::Kind::kOnDemand) {
    std::string error;
    g_server = ControlServer::listen(control_socket_path(dir, getpid()), &error);
    if (!g_server) note("no control socket, so `chokepoint trace` cannot reach this process: " + error);
  }
  g_thread = std::thread(control_loop);
}

void CUPTIAPI window_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  const std::optional<StepSignal> signal = step_signal(domain, cbid, cbdata);
  if (!signal || g_stop) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_plan) apply(g_plan->on_step(*signal, now_ns()));
}

void stop_windows() {
  g_stop = true;
  if (g_thread.joinable()) {
    if (g_thread.get_id() == std::this_thread::get_id()) {
      g_thread.detach();  // a signal handled on the control thread itself
    } else {
      g_thread.join();
    }
  }
  bool was_open = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_plan) return;
    was_open = g_plan->open();
    // A window's end; the whole process keeps collecting until the final flush.
    if (was_open && g_spec.kind != WindowSpec::Kind::kWhole) set_collection(false);
  }
  if (was_open || g_close_pending.exchange(false))
    close_trace_file(was_open && g_spec.kind != WindowSpec::Kind::kWhole);
  g_server.reset();
}

}  // namespace chokepoint::tracer::cuda
