// One trace event as read from JSON, before it is mapped onto the model. Fields are
// collected whatever their order in the object (args may come before cat), and the event
// is mapped only once it has been read completely, so a malformed event adds nothing.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "timeline/model.h"

namespace chokepoint::importers::kineto {

// A pid or tid: a number, a string such as "Spans", or absent.
struct RawId {
  enum Kind : uint8_t { kAbsent, kNumber, kString } kind = kAbsent;
  int64_t value = -1;
};

struct RawEvent {
  char ph = 0;            // first letter of "ph"; 0 when absent or not a string
  std::string_view cat;   // raw text (categories never need unescaping)
  std::string_view name;  // unescaped; valid until the next batch is parsed
  RawId pid, tid;
  bool has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;  // relative to baseTimeNanoseconds

  // args; -1 / NaN / empty when absent.
  int64_t external_id = -1, correlation = -1, device = -1, stream = -1, cbid = -1;
  int64_t registers = -1, shared_mem = -1, bytes = -1, sequence = -1;
  float occupancy_pct = timeline::kUnknownF;
  std::array<int32_t, 3> grid{}, block{};
  std::string_view sync_kind;  // args.cuda_sync_kind
  std::string_view arg_name;   // args.name of M events (process/thread name)
  // NCCL kernels: "In msg nelems" and "dtype" ("Float", "BFloat16", ...).
  int64_t msg_nelems = -1;
  std::string_view dtype;

  // Input type / Input Dims of cpu_op: input j has type input_types[j] (when listed) and
  // dims dims[dim_begin[j] .. dim_begin[j+1]) (when listed).
  bool has_input_types = false, has_input_dims = false;
  std::vector<std::string_view> input_types;
  std::vector<uint32_t> dim_begin;
  std::vector<int64_t> dims;

  // Oddities found while reading, counted when the event is mapped.
  uint16_t bad_numbers = 0, int_overflows = 0, duplicate_keys = 0;

  void reset() {
    // Keep the vectors' capacity: one RawEvent is reused for every event.
    input_types.clear();
    dim_begin.clear();
    dims.clear();
    RawEvent fresh_fields;
    fresh_fields.input_types.swap(input_types);
    fresh_fields.dim_begin.swap(dim_begin);
    fresh_fields.dims.swap(dims);
    *this = std::move(fresh_fields);
  }
};

}  // namespace chokepoint::importers::kineto
