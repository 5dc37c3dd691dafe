// Batches of complete event objects handed to simdjson as one array, so that its
// per-document setup is paid once per ~1 MiB instead of once per event. A batch that
// fails is retried around the bad event, so one bad event costs only itself.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "importers/kineto/event_mapper.h"
#include "importers/kineto/kineto_stats.h"
#include "importers/kineto/raw_event.h"

namespace chokepoint::importers::kineto {

class EventBatch {
 public:
  EventBatch(size_t target_bytes, EventMapper& mapper, StatCounter& stats);

  // Copies one complete event object ('{' ... '}'); parses the batch once it is full.
  void add(const char* event, size_t len);
  // Parses and maps the pending events.
  void flush();

 private:
  simdjson::error_code parse_run(size_t first, size_t* mapped);
  void parse_single(size_t k);
  void sanitize_from(size_t first);

  size_t target_;
  EventMapper& mapper_;
  StatCounter& stats_;
  // '[' event ',' event ... ']' followed by simdjson's padding.
  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0;
  size_t used_ = 0;
  std::vector<size_t> begin_, end_;  // each event's bytes in buf_
  std::vector<char> single_;         // one event and its padding, for parse_single()
  simdjson::ondemand::parser parser_;
  RawEvent ev_;
};

}  // namespace chokepoint::importers::kineto
