#include "importers/kineto/metadata.h"

#include <simdjson.h>

#include <limits>

#include "importers/json/numbers.h"
#include "importers/kineto/event_reader.h"

namespace chokepoint::importers::kineto {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// The members' values are tiny: parse them with checked raw tokens like events.
class MetadataReader {
 public:
  explicit MetadataReader(std::string_view doc) : doc_(doc) {}

  bool int_value(od::value& v, int64_t* out) {
    std::string_view t;
    return !checked_token(v, doc_, &t) && json::parse_int64(t, out) == json::NumberStatus::kOk;
  }

  template <typename T>
  void set_int(od::value& v, T* out) {
    int64_t x;
    if (int_value(v, &x) && x >= std::numeric_limits<T>::min() && x <= std::numeric_limits<T>::max()) {
      *out = static_cast<T>(x);
    }
  }

  error_code string(od::value& v, std::string* out) {
    std::string_view t;
    SIMDJSON_TRY(checked_token(v, doc_, &t));
    if (t.empty() || t[0] != '"') return simdjson::SUCCESS;
    std::string_view s;
    SIMDJSON_TRY(v.get_string().get(s));
    *out = std::string(s);
    return simdjson::SUCCESS;
  }

  error_code device(od::object& obj, timeline::Device* d);
  error_code devices(od::value& v, TraceMetadata& meta, StatCounter& stats);
  error_code distributed(od::value& v, TraceMetadata& meta);

 private:
  std::string_view doc_;
};

error_code MetadataReader::device(od::object& obj, timeline::Device* d) {
  for (auto field : obj) {
    od::field f;
    SIMDJSON_TRY(std::move(field).get(f));
    std::string_view key;
    SIMDJSON_TRY(f.unescaped_key().get(key));
    od::value& v = f.value();
    if (key == "name") {
      SIMDJSON_TRY(string(v, &d->name));
    } else if (key == "id") {
      set_int(v, &d->local_id);
    } else if (key == "totalGlobalMem") {
      set_int(v, &d->total_memory_bytes);
    } else if (key == "computeMajor") {
      set_int(v, &d->cc_major);
    } else if (key == "computeMinor") {
      set_int(v, &d->cc_minor);
    } else if (key == "numSms") {
      set_int(v, &d->num_sms);
    } else if (key == "maxThreadsPerMultiprocessor") {
      set_int(v, &d->max_threads_per_sm);
    } else if (key == "regsPerMultiprocessor") {
      set_int(v, &d->regs_per_sm);
    } else if (key == "sharedMemPerMultiprocessor") {
      set_int(v, &d->shared_mem_per_sm);
    }
  }
  return simdjson::SUCCESS;
}

error_code MetadataReader::devices(od::value& v, TraceMetadata& meta, StatCounter& stats) {
  od::array a;
  SIMDJSON_TRY(v.get_array().get(a));
  for (auto element : a) {
    od::object obj;
    SIMDJSON_TRY(element.get_object().get(obj));
    timeline::Device d;
    SIMDJSON_TRY(device(obj, &d));
    if (d.local_id < 0) {
      stats.add(Stat::kBadMetadata);  // a description without an id describes nothing
      continue;
    }
    meta.devices.push_back(std::move(d));
  }
  return simdjson::SUCCESS;
}

error_code MetadataReader::distributed(od::value& v, TraceMetadata& meta) {
  od::object obj;
  SIMDJSON_TRY(v.get_object().get(obj));
  for (auto field : obj) {
    od::field f;
    SIMDJSON_TRY(std::move(field).get(f));
    std::string_view key;
    SIMDJSON_TRY(f.unescaped_key().get(key));
    od::value& fv = f.value();
    if (key == "backend") {
      SIMDJSON_TRY(string(fv, &meta.backend));
    } else if (key == "rank") {
      set_int(fv, &meta.rank);
    } else if (key == "world_size") {
      set_int(fv, &meta.world_size);
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

bool is_metadata_key(std::string_view key) {
  return key == "baseTimeNanoseconds" || key == "deviceProperties" || key == "distributedInfo";
}

void read_metadata_member(std::string_view key, std::string_view value_json, TraceMetadata& meta, StatCounter& stats) {
  // Wrapped back into an object so that a scalar (baseTimeNanoseconds) is read as a value.
  simdjson::padded_string padded("{\"v\":" + std::string(value_json) + "}");
  MetadataReader reader(std::string_view(padded.data(), padded.size()));
  od::parser parser;
  od::document doc;
  od::object root;
  od::value v;
  error_code err = parser.iterate(padded).get(doc);
  if (!err) err = doc.get_object().get(root);
  if (!err) err = root.find_field("v").get(v);
  if (!err) {
    if (key == "baseTimeNanoseconds") {
      meta.has_base_time = reader.int_value(v, &meta.base_time_ns);
      if (!meta.has_base_time) err = simdjson::NUMBER_ERROR;
    } else if (key == "deviceProperties") {
      err = reader.devices(v, meta, stats);
    } else if (key == "distributedInfo") {
      err = reader.distributed(v, meta);
    }
  }
  if (err) stats.add(Stat::kBadMetadata);
}

}  // namespace chokepoint::importers::kineto
