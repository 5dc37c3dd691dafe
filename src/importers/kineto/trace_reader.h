// Streams a Kineto / Chrome-trace JSON document: reads the input in chunks, walks the
// top-level object with a small state machine (members may come in any order, and
// baseTimeNanoseconds often follows traceEvents), cuts the traceEvents array into complete
// event objects with the structural scanner, and hands them to an EventBatch. Memory is
// bounded by the chunk size plus the largest single event, never by the file size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "importers/importer.h"
#include "importers/input/byte_source.h"
#include "importers/kineto/event_mapper.h"
#include "importers/kineto/kineto_stats.h"
#include "importers/kineto/reader_limits.h"

namespace chokepoint::importers::kineto {

class EventBatch;

class TraceReader {
 public:
  TraceReader(ByteSource& in, const ReaderLimits& limits, const ImportOptions& opts, StatCounter& stats);

  // Reads the whole input, mapping events through `mapper` and top-level members into
  // `meta`. Fails only when the input is not a trace at all.
  Status run(EventMapper& mapper, TraceMetadata& meta);

 private:
  enum class State { kStart, kMember, kColon, kValue, kSkipValue, kEvents, kResync, kDone };
  enum class Step { kNeedMore, kError, kDone };

  // Where skip_value() is inside a top-level value nobody needs.
  struct Skipper {
    int64_t depth = 0;
    bool in_string = false, escape = false, started = false;
  };

  Status fill();
  Step step(TraceMetadata& meta, EventBatch& batch);
  // One state each; nullopt: go on with the next state.
  std::optional<Step> read_start();
  std::optional<Step> read_member_name();
  std::optional<Step> read_colon();
  std::optional<Step> read_value(TraceMetadata& meta);
  std::optional<Step> resync();
  bool scan_events(EventBatch& batch);
  bool skip_value();
  Step top_level_error(size_t p, const char* expected);
  Status finish();
  uint64_t offset(size_t pos) const { return buffer_offset_ + pos; }

  ByteSource& in_;
  ReaderLimits limits_;
  ImportOptions opts_;
  StatCounter& stats_;

  std::vector<char> buf_;  // [0, len_) input, then json::kScanPadding bytes
  size_t len_ = 0;
  size_t pos_ = 0;  // first byte not consumed yet
  uint64_t buffer_offset_ = 0;
  bool eof_ = false;

  State state_ = State::kStart;
  bool bare_array_ = false;  // Chrome's JSON Array Format: the document is the event array
  bool saw_events_ = false;
  int64_t elements_ = 0;
  std::string key_;
  Skipper skip_;
  std::string error_;
};

}  // namespace chokepoint::importers::kineto
