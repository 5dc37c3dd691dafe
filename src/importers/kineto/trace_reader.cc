#include "importers/kineto/trace_reader.h"

#include <cstdio>
#include <cstring>
#include <optional>

#include "importers/json/structural_scanner.h"
#include "importers/kineto/event_batch.h"
#include "importers/kineto/metadata.h"

namespace chokepoint::importers::kineto {
namespace {

using json::is_json_space;
using json::ScanResult;

std::string describe_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  char text[32];
  if (u >= 0x20 && u < 0x7f) {
    std::snprintf(text, sizeof(text), "'%c'", c);
  } else {
    std::snprintf(text, sizeof(text), "byte 0x%02x", u);
  }
  return text;
}

size_t skip_space(const char* d, size_t p, size_t len) {
  while (p < len && is_json_space(d[p])) ++p;
  return p;
}

}  // namespace

TraceReader::TraceReader(ByteSource& in, const ReaderLimits& limits, const ImportOptions& opts, StatCounter& stats)
    : in_(in), limits_(limits), opts_(opts), stats_(stats) {}

Status TraceReader::run(EventMapper& mapper, TraceMetadata& meta) {
  EventBatch batch(limits_.batch_bytes, mapper, stats_);
  while (!eof_) {
    Status st = fill();
    if (!st.ok()) return st;
    const Step s = step(meta, batch);
    if (s == Step::kError) return Status::Error(ErrorCode::kInput, error_);
    if (s == Step::kDone) break;
  }
  batch.flush();
  // Reading stops at the end of the document, so damage after it is never seen; damage
  // before it is what cut the document short.
  if (in_.truncated() && state_ != State::kDone) stats_.add(Stat::kGzipCorrupt);
  return finish();
}

// Moves the unconsumed tail to the front and appends up to one chunk of input.
Status TraceReader::fill() {
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
    len_ -= pos_;
    buffer_offset_ += pos_;
    pos_ = 0;
  }
  const size_t want = len_ + limits_.chunk_bytes + json::kScanPadding;
  if (buf_.size() < want) buf_.resize(want);
  Result<size_t> got = in_.read(buf_.data() + len_, limits_.chunk_bytes);
  if (!got.ok()) return got.status();
  if (got.value() == 0) eof_ = true;
  len_ += got.value();
  if (opts_.progress) opts_.progress(opts_.progress_ctx, in_.consumed(), in_.total());
  return Status::Ok();
}

TraceReader::Step TraceReader::step(TraceMetadata& meta, EventBatch& batch) {
  while (true) {
    std::optional<Step> stop;
    switch (state_) {
      case State::kStart: stop = read_start(); break;
      case State::kMember: stop = read_member_name(); break;
      case State::kColon: stop = read_colon(); break;
      case State::kValue: stop = read_value(meta); break;
      case State::kSkipValue:
        if (!skip_value()) return Step::kNeedMore;
        state_ = State::kMember;
        break;
      case State::kEvents:
        if (!scan_events(batch)) return Step::kNeedMore;
        break;
      case State::kResync: stop = resync(); break;
      case State::kDone: return Step::kDone;
    }
    if (stop) return *stop;
  }
}

// The document's first byte (after a byte order mark and spaces): an object, or Chrome's
// bare event array.
std::optional<TraceReader::Step> TraceReader::read_start() {
  const char* d = buf_.data();
  size_t p = pos_;
  if (offset(0) == 0 && p == 0 && len_ > 0 && d[0] == '\xef') {  // UTF-8 byte order mark
    if (len_ < 3 && !eof_) return Step::kNeedMore;
    if (len_ >= 3 && std::memcmp(d, "\xef\xbb\xbf", 3) == 0) p = 3;
  }
  pos_ = p = skip_space(d, p, len_);
  if (p == len_) return Step::kNeedMore;
  if (d[p] == '{') {
    state_ = State::kMember;
  } else if (d[p] == '[') {
    state_ = State::kEvents;
    bare_array_ = saw_events_ = true;
  } else {
    error_ = "not a JSON trace: it starts with " + describe_byte(d[p]);
    return Step::kError;
  }
  pos_ = p + 1;
  return std::nullopt;
}

// A top-level member's name into key_, or the end of the object.
std::optional<TraceReader::Step> TraceReader::read_member_name() {
  const char* d = buf_.data();
  size_t p = pos_;
  while (p < len_ && (is_json_space(d[p]) || d[p] == ',')) ++p;
  pos_ = p;
  if (p == len_) return Step::kNeedMore;
  if (d[p] == '}') {
    pos_ = p + 1;
    state_ = State::kDone;
    return Step::kDone;
  }
  if (d[p] != '"') return top_level_error(p, "a member name");
  const ScanResult r = json::find_string_end(d, len_, p);
  if (r.kind != ScanResult::kComplete) {
    return len_ - p > limits_.max_value_bytes ? top_level_error(p, "a short member name") : Step::kNeedMore;
  }
  key_.assign(d + p + 1, r.pos - p - 2);
  pos_ = r.pos;
  state_ = State::kColon;
  return std::nullopt;
}

std::optional<TraceReader::Step> TraceReader::read_colon() {
  const char* d = buf_.data();
  const size_t p = pos_ = skip_space(d, pos_, len_);
  if (p == len_) return Step::kNeedMore;
  if (d[p] != ':') return top_level_error(p, "':'");
  pos_ = p + 1;
  state_ = State::kValue;
  return std::nullopt;
}

// The value of member key_: the event array is entered, metadata read, the rest skipped.
std::optional<TraceReader::Step> TraceReader::read_value(TraceMetadata& meta) {
  const char* d = buf_.data();
  const size_t p = pos_ = skip_space(d, pos_, len_);
  if (p == len_) return Step::kNeedMore;
  if (key_ == "traceEvents" && d[p] == '[') {
    saw_events_ = true;
    pos_ = p + 1;
    state_ = State::kEvents;
    return std::nullopt;
  }
  if (key_ == "traceEvents" || is_metadata_key(key_)) {
    const ScanResult r = json::find_value_end(d, len_, p);
    if (r.kind == ScanResult::kNeedMore && len_ - p <= limits_.max_value_bytes) {
      return Step::kNeedMore;
    }
    if (r.kind == ScanResult::kComplete && key_ != "traceEvents") {
      read_metadata_member(key_, std::string_view(d + p, r.pos - p), meta, stats_);
      pos_ = r.pos;
      state_ = State::kMember;
      return std::nullopt;
    }
    stats_.add(Stat::kBadMetadata);  // traceEvents not an array, or an unreadable value
  }
  skip_ = Skipper{};
  state_ = State::kSkipValue;
  return std::nullopt;
}

// After a bad event: on to the next event boundary.
std::optional<TraceReader::Step> TraceReader::resync() {
  const ScanResult r = json::find_resync_point(buf_.data(), len_, pos_);
  pos_ = r.pos;
  if (r.kind != ScanResult::kComplete) return Step::kNeedMore;
  state_ = State::kEvents;
  return std::nullopt;
}

// Cuts complete elements off the event array. Returns false when more input is needed,
// true after a state change (end of the array, or resynchronisation after a bad event).
bool TraceReader::scan_events(EventBatch& batch) {
  const char* d = buf_.data();
  size_t p = pos_;
  while (true) {
    while (p < len_ && (is_json_space(d[p]) || d[p] == ',')) ++p;
    pos_ = p;
    if (p == len_) return false;
    const char c = d[p];
    if (c == ']') {
      pos_ = p + 1;
      state_ = bare_array_ ? State::kDone : State::kMember;
      return true;
    }
    ScanResult r = c == '{' ? json::find_container_end(d, len_, p) : json::find_value_end(d, len_, p);
    if (r.kind == ScanResult::kNeedMore) {
      if (eof_) {
        // The input ends inside this element: a cut-off file, unless a later event
        // boundary shows that a broken element swallowed the rest (a stray quote in a
        // one-line trace flips string state to the end).
        if (json::find_resync_point(d, len_, p + 1).kind != ScanResult::kComplete) return false;
      } else if (len_ - p <= limits_.max_value_bytes) {
        return false;
      }
      r.kind = ScanResult::kCorrupt;  // no event is this big: its structure is lost
    }
    ++elements_;
    if (r.kind == ScanResult::kComplete) {
      if (c == '{') {
        batch.add(d + p, r.pos - p);
      } else {
        stats_.add(Stat::kNonObjectEvent);
      }
      p = r.pos;
      continue;
    }
    stats_.add(c == '{' ? Stat::kMalformedEvent : Stat::kNonObjectEvent);
    pos_ = p + 1;
    state_ = State::kResync;
    return true;
  }
}

// Skips a top-level value nobody needs, of any size, across chunks. Returns true once the
// value has ended (pos_ is then just past it).
bool TraceReader::skip_value() {
  const char* d = buf_.data();
  Skipper& s = skip_;
  for (size_t p = pos_; p < len_; ++p) {
    const char c = d[p];
    if (s.in_string) {
      if (s.escape) {
        s.escape = false;
      } else if (c == '\\') {
        s.escape = true;
      } else if (c == '"') {
        s.in_string = false;
        if (s.depth == 0) {
          pos_ = p + 1;
          return true;
        }
      }
      continue;
    }
    const bool ends_before = (c == ',' && s.depth == 0) || ((c == '}' || c == ']') && s.depth == 0) ||
                             (is_json_space(c) && s.depth == 0 && s.started);
    if (ends_before) {
      pos_ = p;
      return true;
    }
    if (c == '"') {
      s.in_string = true;
    } else if (c == '{' || c == '[') {
      ++s.depth;
    } else if ((c == '}' || c == ']') && --s.depth == 0) {
      pos_ = p + 1;
      return true;
    }
    if (!is_json_space(c)) s.started = true;
  }
  pos_ = len_;
  return false;
}

// Garbage in the top-level object: fatal before any event was seen (then the input is
// not a trace), a warning after (the events read so far are kept).
TraceReader::Step TraceReader::top_level_error(size_t p, const char* expected) {
  if (saw_events_) {
    stats_.add(Stat::kBadMetadata);
    state_ = State::kDone;
    return Step::kDone;
  }
  error_ = "malformed JSON at byte " + std::to_string(offset(p)) + ": expected " + expected + ", found " +
           describe_byte(buf_[p]);
  return Step::kError;
}

Status TraceReader::finish() {
  if (state_ == State::kStart) {
    return Status::Error(ErrorCode::kInput, offset(len_) == 0 ? "the file is empty" : "the file holds no JSON");
  }
  if (!saw_events_) {
    return Status::Error(ErrorCode::kInput, state_ == State::kDone
                                                ? "no traceEvents array: not a Kineto / Chrome trace"
                                                : "the file ends before any traceEvents array (truncated?)");
  }
  if (state_ != State::kDone) stats_.add(Stat::kTruncated);
  if (state_ == State::kEvents || state_ == State::kResync) stats_.add(Stat::kEventsCut);
  if (elements_ == 0) stats_.add(Stat::kEmptyTrace);
  return Status::Ok();
}

}  // namespace chokepoint::importers::kineto
