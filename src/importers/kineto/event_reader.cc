#include "importers/kineto/event_reader.h"

#include <cstring>
#include <limits>

#include "importers/json/numbers.h"

namespace chokepoint::importers::kineto {
namespace {

namespace od = simdjson::ondemand;
using json::NumberStatus;
using simdjson::error_code;

enum class Key : uint8_t { kOther, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs };
enum class ArgKey : uint8_t {
  kOther,
  kExternalId,
  kCorrelation,
  kDevice,
  kStream,
  kCbid,
  kRegisters,
  kSharedMemory,
  kOccupancy,
  kGrid,
  kBlock,
  kBytes,
  kSequence,
  kInputType,
  kInputDims,
  kSyncKind,
  kName,
  kMsgNelems,
  kDtype
};

// Keys are compared on their raw bytes: none of the keys we read contains an escape, and
// a key that does simply matches nothing. A key inside the document is followed by its
// closing quote within 64 bytes or by the 64 bytes of simdjson's padding, so looking that
// far ahead for the quote stays in bounds.
std::string_view raw_key(const od::field& f, std::string_view doc) {
  const char* p = f.key().raw();
  if (p < doc.data() || p >= doc.data() + doc.size()) return {};
  const void* q = std::memchr(p, '"', 64);
  return q ? std::string_view(p, static_cast<size_t>(static_cast<const char*>(q) - p)) : std::string_view();
}

Key classify_key(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "ph") return Key::kPh;
      if (k == "ts") return Key::kTs;
      break;
    case 3:
      if (k == "cat") return Key::kCat;
      if (k == "pid") return Key::kPid;
      if (k == "tid") return Key::kTid;
      if (k == "dur") return Key::kDur;
      break;
    case 4:
      if (k == "name") return Key::kName;
      if (k == "args") return Key::kArgs;
      break;
  }
  return Key::kOther;
}

// The args of NCCL kernels: the message size.
ArgKey classify_collective_arg(std::string_view k) {
  if (k == "dtype") return ArgKey::kDtype;
  if (k == "In msg nelems") return ArgKey::kMsgNelems;
  return ArgKey::kOther;
}

ArgKey classify_arg(std::string_view k) {
  switch (k.size()) {
    case 4:
      if (k == "cbid") return ArgKey::kCbid;
      if (k == "grid") return ArgKey::kGrid;
      if (k == "name") return ArgKey::kName;
      break;
    case 5:
      if (k == "block") return ArgKey::kBlock;
      if (k == "bytes") return ArgKey::kBytes;
      break;
    case 6:
      if (k == "device") return ArgKey::kDevice;
      if (k == "stream") return ArgKey::kStream;
      break;
    case 10:
      if (k == "Input Dims") return ArgKey::kInputDims;
      if (k == "Input type") return ArgKey::kInputType;
      break;
    case 11:
      if (k == "External id") return ArgKey::kExternalId;
      if (k == "correlation") return ArgKey::kCorrelation;
      break;
    case 13:
      if (k == "shared memory") return ArgKey::kSharedMemory;
      break;
    case 14:
      if (k == "cuda_sync_kind") return ArgKey::kSyncKind;
      break;
    case 15:
      if (k == "Sequence number") return ArgKey::kSequence;
      break;
    case 20:
      if (k == "registers per thread") return ArgKey::kRegisters;
      break;
    case 25:
      if (k == "est. achieved occupancy %") return ArgKey::kOccupancy;
      break;
  }
  return classify_collective_arg(k);
}

// Field readers over one document. Values of an unexpected type are skipped, numbers
// that do not parse are counted in the event, and structural errors end the event.
class Reader {
 public:
  Reader(std::string_view document, RawEvent& ev) : doc_(document), ev_(ev) {}

  error_code event(od::object& obj);

 private:
  error_code first_char(od::value& v, char* c) {
    std::string_view t;
    SIMDJSON_TRY(checked_token(v, doc_, &t));
    *c = t.empty() ? '\0' : t[0];
    return simdjson::SUCCESS;
  }

  // A string value; other types leave `out` unchanged.
  error_code string(od::value& v, std::string_view& out) {
    char c;
    SIMDJSON_TRY(first_char(v, &c));
    if (c != '"') return simdjson::SUCCESS;
    return v.get_string().get(out);
  }

  // An integer from the raw token; null leaves `out` unchanged.
  error_code integer(od::value& v, int64_t& out) {
    std::string_view t;
    SIMDJSON_TRY(checked_token(v, doc_, &t));
    if (t.substr(0, 4) == "null") return simdjson::SUCCESS;
    int64_t x;
    count(json::parse_int64(t, &x), [&] { out = x; });
    return simdjson::SUCCESS;
  }

  error_code time(od::value& v, int64_t& out, bool& has) {
    std::string_view t;
    SIMDJSON_TRY(checked_token(v, doc_, &t));
    has = false;
    count(json::parse_us_as_ns(t, &out), [&] { has = true; });
    return simdjson::SUCCESS;
  }

  error_code id(od::value& v, RawId& id) {
    std::string_view t;
    SIMDJSON_TRY(checked_token(v, doc_, &t));
    int64_t x;
    const NumberStatus s = json::parse_int64(t, &x);
    if (s != NumberStatus::kOk && !t.empty() && t[0] == '"') {
      id = {RawId::kString, -1};  // "Spans", "Traces", ""
      return simdjson::SUCCESS;
    }
    count(s, [&] { id = {RawId::kNumber, x}; });
    return simdjson::SUCCESS;
  }

  error_code occupancy(od::value& v) {
    std::string_view t;
    SIMDJSON_TRY(checked_token(v, doc_, &t));
    double x;
    count(json::parse_double(t, &x), [&] { ev_.occupancy_pct = static_cast<float>(x); });
    return simdjson::SUCCESS;
  }

  template <typename OnOk>
  void count(NumberStatus s, OnOk on_ok) {
    switch (s) {
      case NumberStatus::kOk: on_ok(); break;
      case NumberStatus::kOverflow: ++ev_.int_overflows; break;
      case NumberStatus::kInvalid: ++ev_.bad_numbers; break;
    }
  }

  error_code dim3(od::value& v, std::array<int32_t, 3>& out);
  error_code input_types(od::value& v);
  error_code input_dims(od::value& v);
  error_code args(od::object& args);
  error_code arg(ArgKey key, od::value& v);
  error_code field(Key key, od::value& v);
  error_code ph(od::value& v);
  error_code cat(od::value& v);
  error_code args_value(od::value& v);

  std::string_view doc_;
  RawEvent& ev_;
};

error_code Reader::dim3(od::value& v, std::array<int32_t, 3>& out) {
  char c;
  SIMDJSON_TRY(first_char(v, &c));
  if (c != '[') return simdjson::SUCCESS;
  od::array a;
  SIMDJSON_TRY(v.get_array().get(a));
  size_t i = 0;
  for (auto element : a) {
    od::value e;
    SIMDJSON_TRY(std::move(element).get(e));
    int64_t x = -1;
    SIMDJSON_TRY(integer(e, x));
    if (i < 3) out[i++] = (x >= 0 && x <= std::numeric_limits<int32_t>::max()) ? int32_t(x) : 0;
  }
  return simdjson::SUCCESS;
}

error_code Reader::input_types(od::value& v) {
  char c;
  SIMDJSON_TRY(first_char(v, &c));
  if (c != '[') return simdjson::SUCCESS;
  od::array a;
  SIMDJSON_TRY(v.get_array().get(a));
  ev_.has_input_types = true;
  ev_.input_types.clear();  // a repeated key: the last list wins
  for (auto element : a) {
    od::value e;
    SIMDJSON_TRY(std::move(element).get(e));
    std::string_view s;
    SIMDJSON_TRY(string(e, s));
    ev_.input_types.push_back(s);
  }
  return simdjson::SUCCESS;
}

// [[4096, 4096], [4096], []]: one list of dims per input. A list of tensors (nested
// lists) has no single shape and gets rank 0.
error_code Reader::input_dims(od::value& v) {
  char c;
  SIMDJSON_TRY(first_char(v, &c));
  if (c != '[') return simdjson::SUCCESS;
  od::array inputs;
  SIMDJSON_TRY(v.get_array().get(inputs));
  ev_.has_input_dims = true;
  ev_.dims.clear();  // a repeated key: the last list wins
  ev_.dim_begin.assign(1, 0);
  for (auto input : inputs) {
    od::value in;
    SIMDJSON_TRY(std::move(input).get(in));
    SIMDJSON_TRY(first_char(in, &c));
    if (c == '[') {
      const size_t begin = ev_.dims.size();
      od::array shape;
      SIMDJSON_TRY(in.get_array().get(shape));
      for (auto dim : shape) {
        od::value d;
        SIMDJSON_TRY(std::move(dim).get(d));
        SIMDJSON_TRY(first_char(d, &c));
        if (c == '[') {
          ev_.dims.resize(begin);
          break;
        }
        int64_t x = -1;
        SIMDJSON_TRY(integer(d, x));
        ev_.dims.push_back(x);
      }
    }
    ev_.dim_begin.push_back(static_cast<uint32_t>(ev_.dims.size()));
  }
  return simdjson::SUCCESS;
}

// One field of "args", by its key.
error_code Reader::arg(ArgKey key, od::value& v) {
  switch (key) {
    case ArgKey::kExternalId: return integer(v, ev_.external_id);
    case ArgKey::kCorrelation: return integer(v, ev_.correlation);
    case ArgKey::kDevice: return integer(v, ev_.device);
    case ArgKey::kStream: return integer(v, ev_.stream);
    case ArgKey::kCbid: return integer(v, ev_.cbid);
    case ArgKey::kRegisters: return integer(v, ev_.registers);
    case ArgKey::kSharedMemory: return integer(v, ev_.shared_mem);
    case ArgKey::kBytes: return integer(v, ev_.bytes);
    case ArgKey::kSequence: return integer(v, ev_.sequence);
    case ArgKey::kOccupancy: return occupancy(v);
    case ArgKey::kGrid: return dim3(v, ev_.grid);
    case ArgKey::kBlock: return dim3(v, ev_.block);
    case ArgKey::kInputType: return input_types(v);
    case ArgKey::kInputDims: return input_dims(v);
    case ArgKey::kSyncKind: return string(v, ev_.sync_kind);
    case ArgKey::kName: return string(v, ev_.arg_name);
    case ArgKey::kMsgNelems: return integer(v, ev_.msg_nelems);
    case ArgKey::kDtype: return string(v, ev_.dtype);
    case ArgKey::kOther: break;
  }
  return simdjson::SUCCESS;
}

error_code Reader::args(od::object& args) {
  for (auto field_result : args) {
    od::field f;
    SIMDJSON_TRY(std::move(field_result).get(f));
    SIMDJSON_TRY(arg(classify_arg(raw_key(f, doc_)), f.value()));
  }
  return simdjson::SUCCESS;
}

error_code Reader::ph(od::value& v) {
  std::string_view ph;
  SIMDJSON_TRY(string(v, ph));
  ev_.ph = ph.size() == 1 ? ph[0] : '?';
  return simdjson::SUCCESS;
}

error_code Reader::cat(od::value& v) {
  std::string_view t;
  SIMDJSON_TRY(checked_token(v, doc_, &t));
  if (!t.empty() && t[0] == '"') {
    const size_t close = t.find('"', 1);
    ev_.cat = t.substr(1, close == std::string_view::npos ? 0 : close - 1);
  }
  return simdjson::SUCCESS;
}

// "args" when it is an object; other types are skipped.
error_code Reader::args_value(od::value& v) {
  char c;
  SIMDJSON_TRY(first_char(v, &c));
  if (c != '{') return simdjson::SUCCESS;
  od::object a;
  SIMDJSON_TRY(v.get_object().get(a));
  return args(a);
}

// One top-level field of the event, by its key.
error_code Reader::field(Key key, od::value& v) {
  switch (key) {
    case Key::kPh: return ph(v);
    case Key::kCat: return cat(v);
    case Key::kName: return string(v, ev_.name);
    case Key::kPid: return id(v, ev_.pid);
    case Key::kTid: return id(v, ev_.tid);
    case Key::kTs: return time(v, ev_.ts_ns, ev_.has_ts);
    case Key::kDur: return time(v, ev_.dur_ns, ev_.has_dur);
    case Key::kArgs: return args_value(v);
    case Key::kOther: break;
  }
  return simdjson::SUCCESS;
}

error_code Reader::event(od::object& obj) {
  ev_.reset();
  uint32_t seen = 0;
  for (auto field_result : obj) {
    od::field f;
    SIMDJSON_TRY(std::move(field_result).get(f));
    const Key key = classify_key(raw_key(f, doc_));
    if (key != Key::kOther) {
      const uint32_t bit = 1u << static_cast<int>(key);
      if (seen & bit) ++ev_.duplicate_keys;
      seen |= bit;
    }
    SIMDJSON_TRY(field(key, f.value()));
  }
  return simdjson::SUCCESS;
}

}  // namespace

error_code checked_token(od::value& v, std::string_view document, std::string_view* token) {
  const std::string_view t = v.raw_json_token();
  const auto begin = reinterpret_cast<uintptr_t>(document.data());
  const auto at = reinterpret_cast<uintptr_t>(t.data());
  if (at < begin || at - begin > document.size() || t.size() > document.size() - (at - begin)) {
    return simdjson::TAPE_ERROR;
  }
  *token = t;
  return simdjson::SUCCESS;
}

error_code read_event(od::object& obj, std::string_view document, RawEvent& ev) {
  return Reader(document, ev).event(obj);
}

}  // namespace chokepoint::importers::kineto
