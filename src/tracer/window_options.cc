#include "tracer/window_options.h"

#include "base/duration.h"
#include "tracer/window.h"

namespace chokepoint::tracer {
namespace {

Status usage(std::string message) { return Status::Error(ErrorCode::kUsage, std::move(message)); }

// --trace-time START:LENGTH into `spec`.
Status time_window(const std::string& text, WindowSpec& spec) {
  const size_t colon = text.find(':');
  const auto at = colon == std::string::npos ? std::nullopt : parse_duration_ns(text.substr(0, colon));
  const auto length = at ? parse_duration_ns(text.substr(colon + 1)) : std::nullopt;
  if (!length || *length <= 0) {
    return usage("--trace-time '" + text + "' is not START:LENGTH (durations from the start of CUDA, e.g. 60s:10s)");
  }
  spec.kind = WindowSpec::Kind::kTime;
  spec.at_ns = *at;
  spec.for_ns = *length;
  return Status::Ok();
}

}  // namespace

Result<std::string> window_from_options(const WindowOptions& o) {
  WindowSpec spec;
  const int kinds = (o.trace == "on-demand") + !o.steps.empty() + !o.time.empty();
  if (kinds > 1 || (!o.trace.empty() && o.trace != "whole" && o.trace != "on-demand")) {
    return usage(
        "--trace takes whole or on-demand, and one window only: --trace=on-demand, --trace-steps or --trace-time");
  }
  if (o.first_word == "on-demand" || o.first_word == "whole") {
    // `--trace on-demand`: a flag takes no separate value, so the word became the command.
    return usage("--trace takes its mode with '=': --trace=" + o.first_word);
  }
  if (o.trace == "on-demand") spec.kind = WindowSpec::Kind::kOnDemand;
  if (!o.time.empty()) {
    if (Status s = time_window(o.time, spec); !s.ok()) return s;
  }
  if (!o.steps.empty()) {
    std::string error;
    auto s = parse_window_spec("steps=" + o.steps, &error);
    if (!s) return usage("--trace-steps '" + o.steps + "' is not WARMUP:COUNT (e.g. 100:20; COUNT at least 1)");
    spec = *s;
  }
  if (!o.every.empty()) {
    const auto every = parse_duration_ns(o.every);
    if (!every || *every <= 0) return usage("--trace-every '" + o.every + "' is not a duration (e.g. 10m)");
    spec.every_ns = *every;
    if (spec.kind != WindowSpec::Kind::kSteps && spec.kind != WindowSpec::Kind::kTime) {
      return usage("--trace-every repeats a --trace-steps or --trace-time window; give one");
    }
  }
  std::string error;
  if (!parse_window_spec(format_window_spec(spec), &error)) return usage("trace window: " + error);
  return format_window_spec(spec);
}

}  // namespace chokepoint::tracer
