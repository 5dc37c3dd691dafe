#include "importers/kineto/event_batch.h"

#include <cstring>

#include "importers/json/utf8.h"
#include "importers/kineto/event_reader.h"

namespace chokepoint::importers::kineto {
namespace {

namespace od = simdjson::ondemand;

// After this many failed runs in one batch the rest is parsed event by event: each
// retry re-runs simdjson's first stage over the remaining batch, so a batch full of bad
// events would otherwise cost quadratic time.
constexpr int kMaxRetries = 4;

}  // namespace

EventBatch::EventBatch(size_t target_bytes, EventMapper& mapper, StatCounter& stats)
    : target_(target_bytes), mapper_(mapper), stats_(stats) {}

void EventBatch::add(const char* event, size_t len) {
  const size_t need = used_ + len + 2 + simdjson::SIMDJSON_PADDING;
  if (need > capacity_) {
    const size_t cap = std::max(need, std::max(capacity_ * 2, target_ + target_ / 4));
    std::unique_ptr<char[]> grown(new char[cap]);  // not zeroed: every byte is written first
    if (used_) std::memcpy(grown.get(), buf_.get(), used_);
    buf_ = std::move(grown);
    capacity_ = cap;
  }
  buf_[used_++] = begin_.empty() ? '[' : ',';
  begin_.push_back(used_);
  std::memcpy(buf_.get() + used_, event, len);
  used_ += len;
  end_.push_back(used_);
  if (used_ >= target_) flush();
}

void EventBatch::flush() {
  const size_t n = begin_.size();
  if (n == 0) return;
  buf_[used_] = ']';
  // On malformed input On-Demand may peek past the document's end, into the padding:
  // make those bytes fixed so that a result never depends on stale memory.
  std::memset(buf_.get() + used_ + 1, 0, simdjson::SIMDJSON_PADDING);
  size_t next = 0;
  int retries = 0;
  bool sanitized = false;
  while (next < n) {
    if (retries <= kMaxRetries) {
      size_t mapped = 0;
      const simdjson::error_code err = parse_run(next, &mapped);
      next += mapped;
      if (next >= n) break;
      if (err == simdjson::UTF8_ERROR && !sanitized) {
        sanitize_from(next);
        sanitized = true;
        continue;
      }
      ++retries;
    }
    parse_single(next++);
  }
  used_ = 0;
  begin_.clear();
  end_.clear();
}

// Parses events first.. as one array (the separator before event `first` temporarily
// becomes its '['), mapping each event read completely. Stops at the first error.
simdjson::error_code EventBatch::parse_run(size_t first, size_t* mapped) {
  const size_t open = begin_[first] - 1;
  const char saved = buf_[open];
  buf_[open] = '[';
  simdjson::padded_string_view view(buf_.get() + open, used_ + 1 - open, capacity_ - open);
  od::document doc;
  od::array events;
  simdjson::error_code err = parser_.iterate(view).get(doc);
  if (!err) err = doc.get_array().get(events);
  if (!err) {
    for (auto element : events) {
      od::object obj;
      err = element.get_object().get(obj);
      if (!err) err = read_event(obj, std::string_view(view.data(), view.length()), ev_);
      if (err) break;
      mapper_.map(ev_);
      ++*mapped;
    }
  }
  buf_[open] = saved;
  return err;
}

// One event as its own document, copied so that what follows it is padding rather than
// the next events: it parses the same whatever batch it came in.
void EventBatch::parse_single(size_t k) {
  const size_t len = end_[k] - begin_[k];
  single_.assign(buf_.get() + begin_[k], buf_.get() + end_[k]);
  single_.resize(len + simdjson::SIMDJSON_PADDING, '\0');
  const simdjson::padded_string_view view(single_.data(), len, single_.size());
  for (int attempt = 0; attempt < 2; ++attempt) {
    od::document doc;
    od::object obj;
    simdjson::error_code err = parser_.iterate(view).get(doc);
    if (!err) err = doc.get_object().get(obj);
    if (!err) err = read_event(obj, std::string_view(single_.data(), len), ev_);
    if (!err) {
      mapper_.map(ev_);
      return;
    }
    if (err != simdjson::UTF8_ERROR || attempt > 0) break;
    json::sanitize_utf8(single_.data(), len);
    stats_.add(Stat::kInvalidUtf8);
  }
  stats_.add(Stat::kMalformedEvent);
}

void EventBatch::sanitize_from(size_t first) {
  for (size_t k = first; k < begin_.size(); ++k) {
    char* p = buf_.get() + begin_[k];
    const size_t len = end_[k] - begin_[k];
    if (!simdjson::validate_utf8(p, len)) {
      json::sanitize_utf8(p, len);
      stats_.add(Stat::kInvalidUtf8);
    }
  }
}

}  // namespace chokepoint::importers::kineto
