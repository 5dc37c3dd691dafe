#include "importers/cupti/cupti_importer.h"

#include <cxxabi.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "importers/cupti/cupti_records.h"
#include "importers/input/byte_source.h"
#include "importers/step_ranges.h"
#include "tracer/trace_format.h"

namespace chokepoint::importers {
namespace {

using timeline::ApiKind;
using timeline::GpuOpKind;
using timeline::StringId;
using timeline::SyncKind;
using tracer::FileHeader;
using tracer::Record;
using tracer::RecordKind;

// Longer "names" are damage (a C++ template name reaches a few KB).
constexpr uint64_t kMaxStringBytes = 1 << 20;

// Import stats of this format (docs/ARCHITECTURE.md convention 2), from the one catalogue
// (base/stat_catalogue.h).
void stat(timeline::ImportStats& s, StatId id, int64_t n = 1) { s.add(id, n); }

// Kernel names arrive mangled; the model keeps them as Kineto does (demangled).
std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string s(out);
  std::free(out);
  return s;
}

class Reader {
 public:
  Reader(ByteSource& in, int32_t source, timeline::Timeline& tl, timeline::ImportStats& stats)
      : in_(in), source_(source), tl_(tl), stats_(stats), id_offset_(static_cast<int64_t>(source) << 48) {}

  // Streams the file 64 bytes at a time: a long run's trace is gigabytes.
  Status run() {
    FileHeader h{};
    if (!read(reinterpret_cast<char*>(&h), sizeof h))
      return Status::Error(ErrorCode::kInput, "not a chokepoint trace: shorter than its header");
    if (std::memcmp(h.magic, tracer::kMagic, sizeof h.magic) != 0)
      return Status::Error(ErrorCode::kInput, "not a chokepoint trace (bad magic)");
    if (h.version != tracer::kFormatVersion || h.record_size != sizeof(Record)) {
      return Status::Error(ErrorCode::kUnsupported,
                           "chokepoint trace format " + std::to_string(h.version) + " is not one this version reads");
    }
    pid_ = static_cast<int32_t>(h.pid);
    if (h.realtime_ns == 0 || h.cupti_ns == 0 || __builtin_sub_overflow(h.realtime_ns, h.cupti_ns, &offset_))
      offset_ = 0;
    // CUPTI stamps CLOCK_REALTIME on Linux: an offset of more than a second means it
    // does not here, and times are mapped by the header's pair.
    if (offset_ > -1'000'000'000 && offset_ < 1'000'000'000) offset_ = 0;
    // Records come after the header (taken when CUDA initialized) and within a year of it.
    if (h.realtime_ns > 0) {
      lo_ = h.realtime_ns > kHour ? h.realtime_ns - kHour : 0;
      hi_ = h.realtime_ns < INT64_MAX - kYear ? h.realtime_ns + kYear : INT64_MAX;
    }
    header_stats(h);
    tl_.sources[source_].format = "cupti";
    bool ended = false;
    Record r{};
    std::string text;
    while (read(reinterpret_cast<char*>(&r), sizeof r)) {
      if (static_cast<RecordKind>(r.kind) == RecordKind::kString) {
        const uint64_t len = r.start;
        if (len > kMaxStringBytes) {  // checked before allocating (found by fuzz/cupti_fuzzer)
          stat(stats_, StatId::kCuptiBadString);
          break;
        }
        const uint64_t blocks = (len + sizeof(Record) - 1) / sizeof(Record);
        text.resize(blocks * sizeof(Record));
        if (!read(text.data(), text.size())) {
          stat(stats_, StatId::kCuptiBadString);
          break;
        }
        text.resize(len);
        strings_[r.name] = text;
        continue;
      }
      if (static_cast<RecordKind>(r.kind) == RecordKind::kEnd) {
        ended = true;
        if (r.end > 0) stat(stats_, StatId::kCuptiDroppedRecords, static_cast<int64_t>(r.end));
        if (r.sub == tracer::kEndWindowCut) stat(stats_, StatId::kCuptiWindowCut);
        break;
      }
      add(r);
    }
    if (!io_error_.ok()) return io_error_;
    if (in_.truncated()) {
      stat(stats_, StatId::kCuptiGzipTruncated);
    }
    if (!ended && h.status == 0) {
      stat(stats_, StatId::kCuptiTruncated);
    }
    stats_.lost("trace records whose end is before their start or out of range", bad_spans_, spans_);
    link_sync_threads(tl_, begin_calls_, begin_syncs_);
    link_waits_to_events();
    if (!open_ranges_.empty()) {
      stat(stats_, StatId::kCuptiNvtxUnclosed, static_cast<int64_t>(open_ranges_.size()));
    }
    add_steps_from_ranges(tl_, begin_ranges_, source_, timeline::StepSource::kNvtx);
    return Status::Ok();
  }

 private:
  // What the header says about the whole file: why there is no trace, a trace window.
  void header_stats(const FileHeader& h) {
    if (h.status == static_cast<uint32_t>(tracer::TraceStatus::kOtherSubscriber)) {
      stat(stats_, StatId::kCuptiOtherSubscriber);
    } else if (h.status != 0) {
      stat(stats_, StatId::kCuptiNotStarted);
    }
    if (h.window > 0) {
      stat(stats_, StatId::kCuptiWindow);
      tl_.sources[source_].trace_window = true;
    }
  }

  // Exactly n bytes, or false at the end of the input (an I/O error is kept for run()).
  bool read(char* dst, size_t n) {
    while (n > 0) {
      auto got = in_.read(dst, n);
      if (!got.ok()) {
        io_error_ = got.status();
        return false;
      }
      if (got.value() == 0) return false;
      dst += got.value();
      n -= got.value();
    }
    return true;
  }

  // A timestamp on the sampler's clock; false when it does not fit or lies outside the
  // time the process can have run (damaged file): sums of durations then stay far from
  // int64 overflow in the analyses (found by fuzz/cupti_fuzzer).
  bool t(uint64_t ns, int64_t* out) const {
    return ns <= static_cast<uint64_t>(INT64_MAX) && !__builtin_add_overflow(static_cast<int64_t>(ns), offset_, out) &&
           *out >= lo_ && *out <= hi_;
  }
  // Start and end of a record, or false (and counted) when they are not a time span.
  bool span(const Record& r, int64_t* start, int64_t* end) {
    ++spans_;
    if (t(r.start, start) && t(r.end, end) && *end >= *start && *end - *start <= kDay) return true;
    ++bad_spans_;
    stat(stats_, StatId::kCuptiBadTimes);
    return false;
  }
  int64_t id(uint32_t c) const { return c == 0 ? -1 : static_cast<int64_t>(c) + id_offset_; }
  StringId name(uint32_t sid) {
    const auto it = strings_.find(sid);
    if (it == strings_.end()) {
      if (sid != 0) stat(stats_, StatId::kCuptiUnknownString);
      return timeline::kEmptyString;
    }
    return tl_.strings.intern(it->second);
  }
  int16_t device(uint8_t ordinal) { return tl_.device_index(source_, ordinal); }

  void add(const Record& r) {
    switch (static_cast<RecordKind>(r.kind)) {
      case RecordKind::kKernel:
      case RecordKind::kMemcpy:
      case RecordKind::kMemset: add_gpu_op(r); return;
      case RecordKind::kSync: {
        int64_t start = 0, end = 0;
        if (!span(r, &start, &end)) return;
        timeline::SyncEvents& s = tl_.sync_events;
        s.pid.push_back(pid_);
        s.tid.push_back(-1);  // filled from the runtime call with the same correlation
        s.device.push_back(-1);
        s.stream.push_back(static_cast<int32_t>(r.stream));
        s.kind.push_back(cupti_sync_kind(r.sub));
        s.start.push_back(start);
        s.end.push_back(end);
        s.correlation.push_back(id(r.correlation));
        s.event_stream.push_back(-1);  // filled from the event's record, if the file has it
        s.event_correlation.push_back(-1);
        if (s.kind.back() == SyncKind::kStreamWaitEvent && known_sync_id(r.event.sync_id)) {
          waits_.emplace_back(s.size() - 1, r.event.sync_id);
        }
        return;
      }
      case RecordKind::kEvent:
        if (known_sync_id(r.event.sync_id)) {
          events_[r.event.sync_id] = {static_cast<int32_t>(r.stream), id(r.correlation)};
        }
        return;
      case RecordKind::kRuntimeApi:
      case RecordKind::kDriverApi: {
        int64_t start = 0, end = 0;
        if (!span(r, &start, &end)) return;
        timeline::RuntimeCalls& c = tl_.runtime_calls;
        c.pid.push_back(r.api.pid != 0 ? static_cast<int32_t>(r.api.pid) : pid_);
        c.tid.push_back(static_cast<int32_t>(r.stream));
        c.api.push_back(static_cast<RecordKind>(r.kind) == RecordKind::kRuntimeApi ? ApiKind::kRuntime
                                                                                   : ApiKind::kDriver);
        c.name.push_back(name(r.name));
        c.start.push_back(start);
        c.end.push_back(end);
        c.correlation.push_back(id(r.correlation));
        c.external_id.push_back(-1);
        c.cbid.push_back(r.api.cbid);
        return;
      }
      case RecordKind::kDevice: {
        timeline::Device& d = tl_.devices[static_cast<size_t>(device(r.device))];
        const auto it = strings_.find(r.name);
        if (it != strings_.end()) d.name = it->second;
        d.total_memory_bytes = static_cast<int64_t>(r.start);
        d.num_sms = static_cast<int32_t>(r.correlation);
        d.cc_major = static_cast<int32_t>(r.stream / 10);
        d.cc_minor = static_cast<int32_t>(r.stream % 10);
        return;
      }
      case RecordKind::kMarker: add_marker(r); return;
      case RecordKind::kDropped: return;  // the kEnd record carries the total
      default: stat(stats_, StatId::kCuptiUnknownRecords); return;
    }
  }

  void add_gpu_op(const Record& r) {
    GpuOpRecord op;
    if (!span(r, &op.start, &op.end)) return;
    const auto kind = static_cast<RecordKind>(r.kind);
    if (kind == RecordKind::kKernel) {
      const auto it = strings_.find(r.name);
      op.name = it == strings_.end() ? name(r.name) : tl_.strings.intern(demangle(it->second));
      op.grid = dims(r.kernel.grid, kMaxGrid);
      op.block = dims(r.kernel.block, kMaxBlock);
      op.registers = static_cast<int16_t>(std::min<uint16_t>(r.kernel.registers, 32767));
      op.shared_mem = r.kernel.shared_bytes;
    } else if (kind == RecordKind::kMemcpy) {
      op.kind = GpuOpKind::kMemcpy;
      op.copy_kind = cupti_copy_kind(r.sub);
      op.src = cupti_mem_kind(r.copy.src_kind);
      op.dst = cupti_mem_kind(r.copy.dst_kind);
      op.name = tl_.strings.intern(copy_name(op.copy_kind, op.src, op.dst));
      op.bytes = copy_bytes(r.copy.bytes);
    } else {
      op.kind = GpuOpKind::kMemset;
      op.dst = cupti_mem_kind(r.copy.dst_kind);
      op.name = tl_.strings.intern(set_name(op.dst));
      op.bytes = copy_bytes(r.copy.bytes);
    }
    op.device = device(r.device);
    op.stream = static_cast<int32_t>(r.stream);
    op.correlation = id(r.correlation);
    append_gpu_op(tl_.gpu_ops, op);
  }

  // NVTX: a start record opens a range, the end record with its id closes it; the range
  // becomes a user annotation on its thread (and a step when named like one).
  void add_marker(const Record& r) {
    const int32_t pid = r.marker.pid != 0 ? static_cast<int32_t>(r.marker.pid) : pid_;
    int64_t at = 0;
    if (!t(r.start, &at)) {
      stat(stats_, StatId::kCuptiBadTimes);
      return;
    }
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | r.correlation;
    if (r.sub == tracer::kMarkerStart) {
      open_ranges_[key] = OpenRange{at, name(r.name), static_cast<int32_t>(r.stream)};
      return;
    }
    if (r.sub != tracer::kMarkerEnd) return;  // instantaneous markers: no duration
    const auto it = open_ranges_.find(key);
    if (it == open_ranges_.end() || at < it->second.start || at - it->second.start > kDay) {
      stat(stats_, StatId::kCuptiNvtxUnmatched);
      return;
    }
    append_annotation(tl_.cpu_ranges, pid, it->second.tid, it->second.name, it->second.start, at);
    open_ranges_.erase(it);
  }

  // Launch dimensions within CUDA's limits, else unknown (zeros) and counted: a damaged
  // record's 2^31 x 2^31 x 2^31 grid would overflow the analyses' block counts.
  static constexpr std::array<int32_t, 3> kMaxGrid{INT32_MAX, 65535, 65535}, kMaxBlock{1024, 1024, 64};
  std::array<int32_t, 3> dims(const int32_t (&d)[3], const std::array<int32_t, 3>& max) {
    for (int k = 0; k < 3; ++k) {
      if (d[k] < 1 || d[k] > max[k]) {
        stat(stats_, StatId::kCuptiBadKernelDims);
        return {};
      }
    }
    return {d[0], d[1], d[2]};
  }

  // A copy's size, unknown (0) and counted past 2^48 bytes (256 TiB: a damaged record,
  // whose size would overflow the analyses' byte totals).
  int64_t copy_bytes(uint64_t b) {
    if (b <= (uint64_t{1} << 48)) return static_cast<int64_t>(b);
    stat(stats_, StatId::kCuptiBadCopySizes);
    return 0;
  }

  // CUPTI writes 0xFFFFFFFF where a record has no event; files before 2026-12-05 have 0.
  static bool known_sync_id(uint64_t v) { return v != 0 && v != 0xFFFFFFFFull && v != ~0ull; }

  // A stream wait takes the stream and record call of the event recording it waited on
  // (records and waits arrive in buffers of different streams, in no set order).
  void link_waits_to_events() {
    auto& s = tl_.sync_events;
    for (const auto& [row, sync_id] : waits_) {
      const auto it = events_.find(sync_id);
      if (it == events_.end()) continue;
      s.event_stream[row] = it->second.stream;
      s.event_correlation[row] = it->second.correlation;
    }
  }

  ByteSource& in_;
  Status io_error_;
  int32_t source_;
  timeline::Timeline& tl_;
  timeline::ImportStats& stats_;
  int64_t id_offset_;
  int64_t offset_ = 0;
  int64_t spans_ = 0, bad_spans_ = 0;  // time spans read, and those that were not spans
  // A record longer than a day is damage too (the sums of overlapping ones overflow).
  static constexpr int64_t kHour = 3'600'000'000'000, kDay = 24 * kHour, kYear = 365 * kDay;
  int64_t lo_ = 0, hi_ = int64_t{1} << 62;  // the plausible times (header's clock)
  int32_t pid_ = 0;
  std::unordered_map<uint32_t, std::string> strings_;
  size_t begin_calls_ = tl_.runtime_calls.size();
  size_t begin_syncs_ = tl_.sync_events.size();
  struct EventRecord {
    int32_t stream;
    int64_t correlation;
  };
  std::unordered_map<uint64_t, EventRecord> events_;  // by cudaEventSyncId
  std::vector<std::pair<size_t, uint64_t>> waits_;    // sync_events row, cudaEventSyncId
  size_t begin_ranges_ = tl_.cpu_ranges.size();
  struct OpenRange {
    int64_t start;
    StringId name;
    int32_t tid;
  };
  std::unordered_map<uint64_t, OpenRange> open_ranges_;  // (pid, NVTX id) -> its start
};

class CuptiImporter final : public Importer {
 public:
  std::string_view name() const override { return "cupti"; }
  std::string_view description() const override {
    return "chokepoint CUPTI trace (trace-<pid>.cptrace, written by `chokepoint run --trace`)";
  }
  // The tracer's files, plain or gzipped (kept small).
  std::vector<std::string_view> file_suffixes() const override {
    static const std::string gz = std::string(tracer::kTraceFileSuffix) + ".gz";
    return {tracer::kTraceFileSuffix, gz};
  }
  bool sniff(std::string_view head) const override { return sniff_cupti(head); }
  Status import(const std::string& path, int32_t source_index, timeline::Timeline& tl, timeline::ImportStats& stats,
                const ImportOptions&) override {
    auto in = open_file(path);  // plain or gzip (a .cptrace.gz kept small)
    if (!in.ok()) return in.status();
    return Reader(*in.value(), source_index, tl, stats).run();
  }
};

}  // namespace

bool sniff_cupti(std::string_view head) {
  return head.size() >= sizeof(tracer::kMagic) && std::memcmp(head.data(), tracer::kMagic, sizeof(tracer::kMagic)) == 0;
}

Status import_cupti_buffer(std::string_view bytes, int32_t source_index, timeline::Timeline& tl,
                           timeline::ImportStats& stats) {
  auto in = open_memory(bytes);
  return Reader(*in, source_index, tl, stats).run();
}

std::unique_ptr<Importer> make_cupti_importer() { return std::make_unique<CuptiImporter>(); }

}  // namespace chokepoint::importers
