#include "exporters/trace_event_writer.h"

#include <algorithm>

#include "exporters/json_text.h"

namespace chokepoint::exporters {
namespace {

// The buffer goes to the stream in chunks of about this size.
constexpr size_t kFlushBytes = size_t{1} << 20;

// Viewers read pids and tids as unsigned 32-bit (Perfetto files an event whose pid or tid
// is negative under pid 0): a negative id, such as the pthread_self() values cut to 32
// bits of older tracer files, keeps its low 32 bits.
int64_t trace_id(int64_t v) { return v < 0 ? static_cast<int64_t>(static_cast<uint32_t>(v)) : v; }

}  // namespace

TraceEventWriter::TraceEventWriter(std::ostream& out, timeline::TimeNs base) : out_(out), base_(base) {
  buf_.reserve(kFlushBytes + 64 * 1024);
}

void TraceEventWriter::open(char ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
                            timeline::TimeNs ts, bool with_tid) {
  buf_ += first_event_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
  first_event_ = false;
  buf_.push_back(ph);
  buf_ += '"';
  if (!cat.empty()) {
    buf_ += ",\"cat\":";
    append_json_string(buf_, cat);
  }
  buf_ += ",\"name\":";
  append_json_string(buf_, name);
  buf_ += ",\"pid\":";
  append_json_int(buf_, trace_id(pid));
  if (with_tid) {
    buf_ += ",\"tid\":";
    append_json_int(buf_, trace_id(tid));
  }
  buf_ += ",\"ts\":";
  append_json_us(buf_, ts - base_);
}

void TraceEventWriter::dur(timeline::TimeNs d) {
  buf_ += ",\"dur\":";
  append_json_us(buf_, std::max<timeline::TimeNs>(d, 0));
}

void TraceEventWriter::field_int(std::string_view k, int64_t v) {
  buf_ += ',';
  append_json_string(buf_, k);
  buf_ += ':';
  append_json_int(buf_, v);
}

void TraceEventWriter::field_str(std::string_view k, std::string_view v) {
  buf_ += ',';
  append_json_string(buf_, k);
  buf_ += ':';
  append_json_string(buf_, v);
}

void TraceEventWriter::begin_args() {
  buf_ += ",\"args\":{";
  first_arg_ = true;
}

void TraceEventWriter::key(std::string_view k) {
  if (!first_arg_) buf_ += ',';
  first_arg_ = false;
  append_json_string(buf_, k);
  buf_ += ':';
}

void TraceEventWriter::arg_int(std::string_view k, int64_t v) {
  key(k);
  append_json_int(buf_, v);
}

void TraceEventWriter::arg_double(std::string_view k, double v) {
  key(k);
  append_json_double(buf_, v);
}

void TraceEventWriter::arg_float(std::string_view k, float v) {
  key(k);
  append_json_float(buf_, v);
}

void TraceEventWriter::arg_str(std::string_view k, std::string_view v) {
  key(k);
  append_json_string(buf_, v);
}

void TraceEventWriter::arg_dims(std::string_view k, const std::array<int32_t, 3>& d) {
  key(k);
  buf_ += '[';
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0) buf_ += ',';
    append_json_int(buf_, d[i]);
  }
  buf_ += ']';
}

void TraceEventWriter::arg_raw(std::string_view k) { key(k); }

void TraceEventWriter::close() {
  buf_ += '}';
  if (buf_.size() >= kFlushBytes) flush();
}

void TraceEventWriter::flush() {
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

}  // namespace chokepoint::exporters
