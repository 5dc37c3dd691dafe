// Trace windows of `run --trace`: when the CUPTI tracer collects. Outside a window the
// injection library has every activity kind and API record disabled; it only counts step
// starts when a window is defined in steps. This file is the decision alone (no CUDA, no
// clock, no threads), so it is tested without a GPU; tracer/cuda/ drives it.
//
// Windows (CHOKEPOINT_TRACE_WINDOW, written by `run --trace-*`):
//   steps=W:C   after W warm-up steps, the next C steps (closes at the start of step
//               W+C+1, or at exit; opens at the start of step W+1, or of step W when
//               steps are NVTX ranges: the range that opens the window is not recorded
//               whole, so the window starts one step early to hold C whole steps)
//   at=T,for=D  from T ns after CUDA initialized, for D ns
//   every=K     repeat: the next window opens K ns after the previous one opened (a
//               steps window at the first step start from then on)
//   on-demand   no window until `chokepoint trace` asks for one (control.h)
// Empty: the whole job, as before windows existed.
//
// Steps (docs/RECORDING.md "Trace windows"): the starts of NVTX ranges named like an
// iteration (timeline/step_name.h, as the step analysis reads them). A job without such
// ranges has its steps inferred from host synchronizations (cudaDeviceSynchronize,
// cudaStreamSynchronize: torch.cuda.synchronize(), .item()), one step per
// synchronization; once the first NVTX step range shows up, only NVTX counts (and the
// count starts again when no window has opened yet).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chokepoint::tracer {

inline constexpr const char* kTraceWindowEnv = "CHOKEPOINT_TRACE_WINDOW";

struct WindowSpec {
  enum class Kind { kWhole, kSteps, kTime, kOnDemand };
  Kind kind = Kind::kWhole;
  int64_t warmup_steps = 0, steps = 0;  // kSteps
  int64_t at_ns = 0, for_ns = 0;        // kTime
  int64_t every_ns = 0;                 // kSteps, kTime: 0 once
};

// The spec from CHOKEPOINT_TRACE_WINDOW's text; nullopt (and `error`) when malformed.
std::optional<WindowSpec> parse_window_spec(std::string_view text, std::string* error);
// The text parse_window_spec reads back ("" for the whole job).
std::string format_window_spec(const WindowSpec& s);

enum class StepSignal { kNvtx, kSync };
enum class WindowAction { kNone, kOpen, kClose };

// The state of the windows over the run. Not thread-safe: the caller holds a lock.
class WindowPlan {
 public:
  WindowPlan(const WindowSpec& spec, int64_t start_ns);

  // A step starts at `now` (an NVTX step range opened, or a host synchronization).
  WindowAction on_step(StepSignal signal, int64_t now);
  // The clock reached `now`: time windows open and close, on-demand durations end.
  WindowAction on_time(int64_t now);
  // The previous window's file is complete (flushed and closed): the next may open.
  void on_flushed() { flushing_ = false; }

  // On demand (`chokepoint trace`): a window of `steps` steps from the next step start,
  // or of `duration_ns` from now (the caller then calls on_time(now)). "" when taken,
  // else why not.
  std::string request(int64_t steps, int64_t duration_ns, int64_t now);

  bool open() const { return open_; }
  // Windows opened so far (the open one's number when open()).
  int windows() const { return windows_; }
  // Steps counted in the window that is open (or the last one).
  int64_t window_steps() const { return window_steps_; }
  // Whether step starts matter now (the injection keeps its step callbacks on).
  bool wants_steps() const;
  // When on_time() has something to do next; INT64_MAX when nothing is timed.
  int64_t next_time() const;

 private:
  WindowAction open_now(int64_t now, int64_t target_steps, int64_t close_at);
  WindowAction close_now();
  WindowAction step_window(StepSignal signal, int64_t now);
  WindowAction timed_window(int64_t now);

  WindowSpec spec_;
  int64_t start_ns_ = 0;
  bool open_ = false;
  bool flushing_ = false;  // a closed window's file is still being completed
  int windows_ = 0;
  int64_t steps_seen_ = 0;     // step starts counted (kSteps: since the start)
  int64_t window_steps_ = 0;   // steps counted in the open window
  int64_t window_target_ = 0;  // steps the open window takes; 0: timed
  int64_t close_at_ = INT64_MAX;
  int64_t next_open_at_ = 0;      // repeats: not before this
  int64_t pending_steps_ = 0;     // on demand: a steps window waiting for its first step
  int64_t pending_duration_ = 0;  // on demand: a timed window to open at the next on_time()
  bool nvtx_seen_ = false;
};

}  // namespace chokepoint::tracer
