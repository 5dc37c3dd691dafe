// libFuzzer target for the Kineto importer (docs/ARCHITECTURE.md convention 11: one fuzzer per importer).
//
// Each input is imported twice: in one chunk (inputs are at most -max_len=64 KiB) and in
// 7-byte chunks, so that every event is split across reads. Besides crashes, hangs and memory blowups (ASan,
// UBSan, -timeout, -rss_limit_mb), the fuzzer checks that the two imports agree and
// that the model is consistent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "importers/kineto/kineto_importer.h"

namespace {

using chokepoint::importers::KinetoLimits;
using chokepoint::timeline::ImportStats;
using chokepoint::timeline::Timeline;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "kineto_fuzzer: %s\n", what);
    std::abort();
  }
}

void check_model(const Timeline& tl) {
  const auto& g = tl.gpu_ops;
  for (size_t i = 0; i < g.size(); ++i) {
    check(g.end[i] >= g.start[i], "GPU op ends before it starts");
    check(g.device[i] >= 0 && static_cast<size_t>(g.device[i]) < tl.devices.size(),
          "GPU op on a device index out of range");
    check(g.name[i] < tl.strings.size(), "GPU op name id out of range");
  }
  const auto& c = tl.cpu_ranges;
  for (size_t i = 0; i < c.size(); ++i) {
    check(c.end[i] >= c.start[i], "CPU range ends before it starts");
    check(c.inputs[i] == chokepoint::timeline::CpuRanges::kNoInputs || c.inputs[i] < tl.op_inputs.ops(),
          "CPU range inputs out of range");
  }
  const auto& in = tl.op_inputs;
  check(in.op_begin.back() == in.type.size(), "op inputs not closed");
  check(in.dim_begin.size() == in.type.size() + 1, "op input dims not closed");
  check(in.dim_begin.back() == in.dims.size(), "op input dims out of range");
  for (size_t i = 0; i < tl.sync_events.size(); ++i) {
    check(tl.sync_events.device[i] < static_cast<int16_t>(tl.devices.size()), "sync event device out of range");
  }
}

struct Result {
  bool ok;
  Timeline tl;
  ImportStats stats;
};

void import(std::string_view bytes, const KinetoLimits& limits, Result* r) {
  r->ok = chokepoint::importers::import_kineto_buffer(bytes, 0, r->tl, r->stats, limits).ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Result normal, tiny;
  KinetoLimits whole;  // smaller than the defaults, which would make each run allocate MiBs
  whole.chunk_bytes = 128 << 10;
  whole.batch_bytes = 64 << 10;
  import(bytes, whole, &normal);
  KinetoLimits small;
  small.chunk_bytes = 7;
  small.batch_bytes = 100;
  import(bytes, small, &tiny);

  check(normal.ok == tiny.ok, "chunk size changed whether the import succeeded");
  if (!normal.ok) return 0;
  check_model(normal.tl);
  check(normal.tl.event_count() == tiny.tl.event_count(), "chunk size changed the events");
  check(normal.tl.steps.size() == tiny.tl.steps.size(), "chunk size changed the steps");
  check(normal.tl.op_inputs.dims == tiny.tl.op_inputs.dims, "chunk size changed input dims");
  check(normal.stats.all().size() == tiny.stats.all().size(), "chunk size changed the stats");
  for (const auto& s : normal.stats.all()) {
    check(tiny.stats.count(s.name) == s.count, "chunk size changed a stat count");
  }
  return 0;
}
