// TraceEventWriter: Chrome trace-event JSON, one event per line, appended to a buffer that
// goes to the stream in chunks (exporters/chrome_trace.cc writes 10^7 events through it
// without holding the document). Times are written relative to a base, in µs with three
// decimals (json_text.h).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "timeline/model.h"

namespace chokepoint::exporters {

class TraceEventWriter {
 public:
  TraceEventWriter(std::ostream& out, timeline::TimeNs base);

  // Text outside the event list (the document's head and tail).
  void raw(std::string_view s) { buf_.append(s); }
  // Where to append a value by hand (after arg_raw(), or inside raw text).
  std::string& buffer() { return buf_; }

  // Starts an event: {"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":.. . An empty
  // `cat` is left out; so is the tid when `with_tid` is false (counters and process
  // names belong to the process).
  void open(char ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid, timeline::TimeNs ts,
            bool with_tid = true);
  void dur(timeline::TimeNs d);  // negative durations are written as 0
  void field_int(std::string_view key, int64_t v);
  void field_str(std::string_view key, std::string_view v);

  // "args":{...}: the arg_*() calls between begin_args() and end_args().
  void begin_args();
  void arg_int(std::string_view key, int64_t v);
  void arg_double(std::string_view key, double v);  // NaN and infinities become null
  void arg_float(std::string_view key, float v);
  void arg_str(std::string_view key, std::string_view v);
  void arg_dims(std::string_view key, const std::array<int32_t, 3>& d);
  void arg_raw(std::string_view key);  // the value follows through buffer()
  void end_args() { buf_ += '}'; }

  // Ends the event; flushes when the buffer is full.
  void close();
  void flush();
  bool ok() const { return out_.good(); }

 private:
  void key(std::string_view k);

  std::ostream& out_;
  timeline::TimeNs base_;
  std::string buf_;
  bool first_event_ = true;
  bool first_arg_ = true;
};

}  // namespace chokepoint::exporters
