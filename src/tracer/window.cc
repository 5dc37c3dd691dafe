#include "tracer/window.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace chokepoint::tracer {
namespace {

bool number(std::string_view s, int64_t* out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, *out);
  return !s.empty() && ec == std::errc() && p == end && *out >= 0;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const size_t i = s.find(sep);
    parts.push_back(s.substr(0, i));
    if (i == std::string_view::npos) break;
    s.remove_prefix(i + 1);
  }
  return parts;
}

// One `key=value` (or `on-demand`) into `s`; false when it is not one.
bool apply(std::string_view item, WindowSpec& s) {
  using Kind = WindowSpec::Kind;
  if (item == "on-demand") {
    s.kind = Kind::kOnDemand;
    return true;
  }
  const size_t eq = item.find('=');
  if (eq == std::string_view::npos) return false;
  const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
  if (key == "steps") {
    const size_t colon = value.find(':');
    s.kind = Kind::kSteps;
    return colon != std::string_view::npos && number(value.substr(0, colon), &s.warmup_steps) &&
           number(value.substr(colon + 1), &s.steps);
  }
  if (key == "at" || key == "for") {
    s.kind = Kind::kTime;
    return number(value, key == "at" ? &s.at_ns : &s.for_ns);
  }
  return key == "every" && number(value, &s.every_ns);
}

// "" when the spec is consistent, else why not.
std::string check(const WindowSpec& s) {
  using Kind = WindowSpec::Kind;
  if (s.kind == Kind::kSteps && s.steps <= 0) return "a steps window needs at least one step";
  if (s.kind == Kind::kTime && s.for_ns <= 0) return "a timed window needs a length (for=)";
  if (s.every_ns > 0 && s.kind != Kind::kSteps && s.kind != Kind::kTime)
    return "every= repeats a steps or timed window";
  if (s.kind == Kind::kTime && s.every_ns > 0 && s.every_ns <= s.for_ns) return "every= must be longer than the window";
  return "";
}

}  // namespace

std::optional<WindowSpec> parse_window_spec(std::string_view text, std::string* error) {
  WindowSpec s;
  std::optional<WindowSpec::Kind> kind;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) continue;
    const WindowSpec before = s;
    if (!apply(item, s) || (kind && s.kind != *kind && before.kind != WindowSpec::Kind::kWhole)) {
      if (error != nullptr) *error = "bad trace window '" + std::string(item) + "' in '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (s.kind != WindowSpec::Kind::kWhole) kind = s.kind;
  }
  if (std::string why = check(s); !why.empty()) {
    if (error != nullptr) *error = why;
    return std::nullopt;
  }
  return s;
}

std::string format_window_spec(const WindowSpec& s) {
  // Appended piece by piece (GCC 12 warns falsely on `"literal" + std::string`).
  std::string t;
  const auto field = [&t](const char* key, int64_t value, const char* sep) {
    t += key;
    t += std::to_string(value);
    t += sep;
  };
  switch (s.kind) {
    case WindowSpec::Kind::kWhole: return "";
    case WindowSpec::Kind::kOnDemand: return "on-demand";
    case WindowSpec::Kind::kSteps:
      field("steps=", s.warmup_steps, ":");
      field("", s.steps, "");
      break;
    case WindowSpec::Kind::kTime:
      field("at=", s.at_ns, ",");
      field("for=", s.for_ns, "");
      break;
  }
  if (s.every_ns > 0) field(",every=", s.every_ns, "");
  return t;
}

WindowPlan::WindowPlan(const WindowSpec& spec, int64_t start_ns) : spec_(spec), start_ns_(start_ns) {
  next_open_at_ = spec.kind == WindowSpec::Kind::kTime ? start_ns + spec.at_ns : start_ns;
}

WindowAction WindowPlan::open_now(int64_t now, int64_t target_steps, int64_t close_at) {
  open_ = true;
  ++windows_;
  window_target_ = target_steps;
  window_steps_ = target_steps > 0 ? 1 : 0;
  close_at_ = close_at;
  if (spec_.kind == WindowSpec::Kind::kSteps) next_open_at_ = now + spec_.every_ns;
  return WindowAction::kOpen;
}

WindowAction WindowPlan::close_now() {
  open_ = false;
  flushing_ = true;
  close_at_ = INT64_MAX;
  return WindowAction::kClose;
}

WindowAction WindowPlan::on_step(StepSignal signal, int64_t now) {
  if (signal == StepSignal::kSync && nvtx_seen_) return WindowAction::kNone;
  if (signal == StepSignal::kNvtx && !nvtx_seen_) {
    nvtx_seen_ = true;
    if (windows_ == 0 && !open_) steps_seen_ = 0;  // synchronizations counted so far do not
    // A window a synchronization opened (on demand, before any NVTX range was seen): this
    // range, recorded whole, is its first step.
    if (open_ && window_target_ > 0) window_steps_ = 0;
  }
  ++steps_seen_;
  if (!open_) return step_window(signal, now);
  if (window_target_ == 0) return WindowAction::kNone;  // a timed window
  if (window_steps_ >= window_target_) return close_now();
  ++window_steps_;
  return WindowAction::kNone;
}

WindowAction WindowPlan::step_window(StepSignal signal, int64_t now) {
  if (flushing_) return WindowAction::kNone;
  // An NVTX step range is recorded as it opens, before the callback that counts it: the
  // step whose start opens the window has no start record and is not a whole step of it.
  // So the window opens one step early, and takes one step more.
  const int64_t lead = signal == StepSignal::kNvtx ? 1 : 0;
  if (pending_steps_ > 0) {
    const int64_t n = pending_steps_;
    pending_steps_ = 0;
    return open_now(now, n + lead, INT64_MAX);
  }
  if (spec_.kind != WindowSpec::Kind::kSteps) return WindowAction::kNone;
  const bool due = windows_ == 0 ? steps_seen_ + lead > spec_.warmup_steps : spec_.every_ns > 0 && now >= next_open_at_;
  return due ? open_now(now, spec_.steps + lead, INT64_MAX) : WindowAction::kNone;
}

WindowAction WindowPlan::on_time(int64_t now) {
  if (open_) return now >= close_at_ ? close_now() : WindowAction::kNone;
  if (flushing_) return WindowAction::kNone;
  if (pending_duration_ > 0) {
    const int64_t d = pending_duration_;
    pending_duration_ = 0;
    return open_now(now, 0, now + d);
  }
  return timed_window(now);
}

WindowAction WindowPlan::timed_window(int64_t now) {
  using Kind = WindowSpec::Kind;
  if (spec_.kind == Kind::kWhole) return windows_ == 0 ? open_now(now, 0, INT64_MAX) : WindowAction::kNone;
  if (spec_.kind != Kind::kTime || now < next_open_at_ || (windows_ > 0 && spec_.every_ns == 0)) {
    return WindowAction::kNone;
  }
  // On the schedule, not drifting with late wake-ups; a window missed whole is skipped.
  const int64_t opened = next_open_at_;
  if (spec_.every_ns > 0) {
    while (next_open_at_ <= now) next_open_at_ += spec_.every_ns;
  }
  if (now >= opened + spec_.for_ns) return WindowAction::kNone;
  return open_now(now, 0, opened + spec_.for_ns);
}

std::string WindowPlan::request(int64_t steps, int64_t duration_ns, int64_t now) {
  (void)now;
  if (spec_.kind != WindowSpec::Kind::kOnDemand) {
    return "this job was not started with `run --trace=on-demand` (its trace windows are fixed at start)";
  }
  if (open_ || pending_steps_ > 0 || pending_duration_ > 0) {
    return "a trace window is already in progress (window " + std::to_string(windows_ + (open_ ? 0 : 1)) + ")";
  }
  if (flushing_) return "the previous window's trace is still being written; ask again in a moment";
  if (steps > 0) {
    pending_steps_ = steps;
  } else if (duration_ns > 0) {
    pending_duration_ = duration_ns;
  } else {
    return "ask for a number of steps or a duration";
  }
  return "";
}

bool WindowPlan::wants_steps() const {
  switch (spec_.kind) {
    case WindowSpec::Kind::kSteps: return open_ || windows_ == 0 || spec_.every_ns > 0;
    case WindowSpec::Kind::kOnDemand: return pending_steps_ > 0 || (open_ && window_target_ > 0);
    default: return false;
  }
}

int64_t WindowPlan::next_time() const {
  if (open_) return close_at_;
  if (pending_duration_ > 0 || (spec_.kind == WindowSpec::Kind::kWhole && windows_ == 0)) return start_ns_;  // due
  const bool timed = spec_.kind == WindowSpec::Kind::kTime && (windows_ == 0 || spec_.every_ns > 0);
  return timed ? std::max(next_open_at_, start_ns_) : INT64_MAX;
}

}  // namespace chokepoint::tracer
