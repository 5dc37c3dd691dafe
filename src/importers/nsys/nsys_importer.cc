#include "importers/nsys/nsys_importer.h"

#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/cupti/cupti_records.h"
#include "importers/input/byte_source.h"
#include "importers/step_ranges.h"

namespace chokepoint::importers {
namespace {

using timeline::GpuOpKind;
using timeline::MemKind;
using timeline::StringId;

constexpr char kSqliteMagic[] = "SQLite format 3";  // and its NUL: the first 16 bytes
// A gzipped export is inflated into memory (SQLite reads pages at random): this much at most.
constexpr uint64_t kMaxInflatedBytes = uint64_t{4} << 30;
constexpr int64_t kHour = 3'600'000'000'000, kDay = 24 * kHour, kYear = 365 * kDay;
// NVTX_EVENTS.eventType (nsys' NvtxEventType): push/pop and start/end ranges.
constexpr int64_t kNvtxPushPop = 59, kNvtxStartEnd = 60;
// CUPTI_ACTIVITY_KIND_RUNTIME.eventClass (ENUM_NSYS_EVENT_CLASS): the driver's calls.
constexpr int64_t kEventClassDriver = 1;
constexpr const char* kGpuTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                      "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME"};

// A prepared statement, finalized when it goes.
class Query {
 public:
  Query(sqlite3* db, const std::string& sql) {
    prepared_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) == SQLITE_OK && s_ != nullptr;
  }
  ~Query() { sqlite3_finalize(s_); }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  bool prepared() const { return prepared_; }
  // The next row; false at the end or on an error (then failed() says so).
  bool step() {
    if (!prepared()) return false;
    rc_ = sqlite3_step(s_);
    return rc_ == SQLITE_ROW;
  }
  bool failed() const { return rc_ != SQLITE_DONE && rc_ != SQLITE_ROW && rc_ != SQLITE_OK; }
  bool null(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }
  int64_t i64(int i, int64_t unknown = -1) const { return null(i) ? unknown : sqlite3_column_int64(s_, i); }
  std::string text(int i) const {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
    return t == nullptr ? std::string() : std::string(t, static_cast<size_t>(sqlite3_column_bytes(s_, i)));
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool prepared_ = false;
  int rc_ = SQLITE_OK;
};

class Reader {
 public:
  Reader(sqlite3* db, int32_t source, timeline::Timeline& tl, timeline::ImportStats& stats)
      : db_(db), source_(source), tl_(tl), stats_(stats) {}

  Status run() {
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    Query tables(db_, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (tables.step()) tables_.insert(tables.text(0));
    if (!tables.prepared() || tables.failed()) {
      return Status::Error(ErrorCode::kInput, std::string("not a readable SQLite database: ") + sqlite3_errmsg(db_));
    }
    bool any = false;
    for (const char* t : kGpuTables) any = any || tables_.count(t) > 0;
    if (!any) {
      return Status::Error(ErrorCode::kInput,
                           "a SQLite database without CUPTI_ACTIVITY_KIND_* tables: not an Nsight Systems export "
                           "(nsys export --type sqlite) of a run traced with --trace=cuda");
    }
    tl_.sources[source_].format = "nsys";
    session_start();
    read_mem_kinds();
    read_gpus();
    read_thread_names();
    read_runtime();
    read_kernels();
    read_copies();
    read_sets();
    read_syncs();
    read_nvtx();
    stats_.lost("nsys records whose end is before their start or out of range", bad_spans_, spans_);
    link_sync_threads(tl_, first_call_, first_sync_);
    add_steps_from_ranges(tl_, first_range_, source_, timeline::StepSource::kNvtx);
    return Status::Ok();
  }

 private:
  // `alias.column` when `table` has it, else NULL (older exports lack some columns).
  std::string col(const std::string& table, const char* alias, const char* column) {
    auto it = columns_.find(table);
    if (it == columns_.end()) {
      std::set<std::string> names;
      Query q(db_, "SELECT name FROM pragma_table_info('" + table + "')");
      while (q.step()) names.insert(q.text(0));
      it = columns_.emplace(table, std::move(names)).first;
    }
    return it->second.count(column) > 0 ? std::string(alias) + "." + column : std::string("NULL");
  }
  std::string string_join(const std::string& table, const char* alias, const char* column, const char* as) {
    const std::string c = col(table, alias, column);
    if (c == "NULL" || tables_.count("StringIds") == 0) return "";
    return " LEFT JOIN StringIds " + std::string(as) + " ON " + as + ".id = " + c;
  }
  std::string string_value(const std::string& join, const char* as) {
    return join.empty() ? std::string("NULL") : std::string(as) + ".value";
  }
  // Every row of `sql` to `row`; a database damaged mid-table is read up to the damage.
  template <typename F>
  void each(const std::string& table, const std::string& sql, F&& row) {
    if (tables_.count(table) == 0) return;
    Query q(db_, sql);
    while (q.step()) row(q);
    if (!q.prepared() || q.failed()) stats_.add(StatId::kNsysDamaged);
  }

  // nsys times count from the capture's start; its UTC epoch puts them on the sampler's
  // clock (CLOCK_REALTIME), as the tracer's are.
  void session_start() {
    each("TARGET_INFO_SESSION_START_TIME", "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", [&](Query& q) {
      const int64_t t = q.i64(0, 0);
      if (t > 0 && t < INT64_MAX / 2) offset_ = t;
    });
  }
  bool span(int64_t start, int64_t end, int64_t* s, int64_t* e) {
    ++spans_;
    if (start >= -kHour && start <= kYear && end >= start && end - start <= kDay) {
      *s = start + offset_;
      *e = end + offset_;
      return true;
    }
    ++bad_spans_;
    stats_.add(StatId::kNsysBadTimes);
    return false;
  }
  // A row's name from StringIds; a name id the table lacks is counted.
  StringId name(const Query& q, int i) {
    if (q.null(i)) {
      stats_.add(StatId::kNsysUnknownString);
      return timeline::kEmptyString;
    }
    return tl_.strings.intern(q.text(i));
  }
  // nsys' serialized GlobalId: pid in bits 24-47, tid in bits 0-23.
  static int32_t pid_of(int64_t global) { return global < 0 ? -1 : static_cast<int32_t>((global >> 24) & 0xFFFFFF); }
  static int32_t tid_of(int64_t global) { return global < 0 ? -1 : static_cast<int32_t>(global & 0xFFFFFF); }
  // Correlation ids are per process: the process joins them (its low 16 bits) and the source.
  int64_t id(int64_t correlation, int64_t global) const {
    if (correlation <= 0) return -1;
    return (int64_t{source_} << 48) + (static_cast<int64_t>(pid_of(global) & 0xFFFF) << 32) +
           (correlation & 0xFFFFFFFF);
  }
  int16_t device(int64_t id) { return tl_.device_index(source_, static_cast<int32_t>(id < 0 ? -1 : id & 0xFFFF)); }

  // ENUM_CUDA_MEM_KIND (nsys' own values, not CUPTI's) by name; without the table, the
  // values every export seen used (0 pageable, 1 pinned, 2 device, 3 array, 4 managed).
  void read_mem_kinds() {
    mem_kinds_ = {{0, MemKind::kPageable},
                  {1, MemKind::kPinned},
                  {2, MemKind::kDevice},
                  {3, MemKind::kArray},
                  {4, MemKind::kManaged}};
    each("ENUM_CUDA_MEM_KIND", "SELECT id, name FROM ENUM_CUDA_MEM_KIND", [&](Query& q) {
      static constexpr std::pair<const char*, MemKind> kNames[] = {
          {"_PAGEABLE", MemKind::kPageable}, {"_PINNED", MemKind::kPinned},   {"_DEVICE", MemKind::kDevice},
          {"_ARRAY", MemKind::kArray},       {"_MANAGED", MemKind::kManaged}, {"_UNKNOWN", MemKind::kUnknown}};
      const std::string n = q.text(1);
      for (const auto& [suffix, kind] : kNames) {
        if (n.ends_with(suffix)) mem_kinds_[q.i64(0)] = kind;
      }
    });
  }
  MemKind mem_kind(const Query& q, int i) {
    const auto it = mem_kinds_.find(q.i64(i));
    return it == mem_kinds_.end() ? MemKind::kUnknown : it->second;
  }

  void read_gpus() {
    const std::string t = "TARGET_INFO_GPU";
    each(t,
         "SELECT " + col(t, "g", "id") + ", " + col(t, "g", "name") + ", " + col(t, "g", "totalMemory") + ", " +
             col(t, "g", "smCount") + ", " + col(t, "g", "computeMajor") + ", " + col(t, "g", "computeMinor") + ", " +
             col(t, "g", "maxWarpsPerSm") + ", " + col(t, "g", "threadsPerWarp") + ", " +
             col(t, "g", "maxRegistersPerSm") + ", " + col(t, "g", "maxShmemPerSm") + " FROM " + t + " g",
         [&](Query& q) {
           if (q.null(0)) return;
           timeline::Device& d = tl_.devices[static_cast<size_t>(device(q.i64(0)))];
           d.name = q.text(1);
           d.total_memory_bytes = q.i64(2);
           d.num_sms = static_cast<int32_t>(q.i64(3));
           d.cc_major = static_cast<int32_t>(q.i64(4));
           d.cc_minor = static_cast<int32_t>(q.i64(5));
           if (q.i64(6) > 0 && q.i64(7) > 0) d.max_threads_per_sm = static_cast<int32_t>(q.i64(6) * q.i64(7));
           d.regs_per_sm = static_cast<int32_t>(q.i64(8));
           d.shared_mem_per_sm = q.i64(9);
         });
  }

  void read_thread_names() {
    const std::string t = "ThreadNames";
    const std::string join = string_join(t, "n", "nameId", "s");
    each(t, "SELECT " + col(t, "n", "globalTid") + ", " + string_value(join, "s") + " FROM " + t + " n" + join,
         [&](Query& q) {
           if (q.null(0) || q.null(1)) return;
           tl_.thread_names.push_back({pid_of(q.i64(0)), tid_of(q.i64(0)), q.text(1)});
         });
  }

  void read_runtime() {
    const std::string t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    const std::string join = string_join(t, "r", "nameId", "s");
    each(t,
         "SELECT r.start, r.end, " + col(t, "r", "eventClass") + ", " + col(t, "r", "globalTid") + ", " +
             col(t, "r", "correlationId") + ", " + string_value(join, "s") + " FROM " + t + " r" + join,
         [&](Query& q) {
           int64_t start = 0, end = 0;
           if (!span(q.i64(0), q.i64(1), &start, &end)) return;
           const int64_t global = q.i64(3);
           timeline::RuntimeCalls& c = tl_.runtime_calls;
           c.pid.push_back(pid_of(global));
           c.tid.push_back(tid_of(global));
           c.api.push_back(q.i64(2) == kEventClassDriver ? timeline::ApiKind::kDriver : timeline::ApiKind::kRuntime);
           c.name.push_back(name(q, 5));
           c.start.push_back(start);
           c.end.push_back(end);
           c.correlation.push_back(id(q.i64(4), global));
           c.external_id.push_back(-1);
           c.cbid.push_back(-1);  // nsys keeps the name, not CUPTI's callback id
         });
  }

  // The columns every GPU op table shares: start, end, deviceId, streamId, correlationId, globalPid.
  std::string op_columns(const std::string& t) {
    return "o.start, o.end, " + col(t, "o", "deviceId") + ", " + col(t, "o", "streamId") + ", " +
           col(t, "o", "correlationId") + ", " + col(t, "o", "globalPid");
  }
  bool op(const Query& q, GpuOpRecord& r) {
    if (!span(q.i64(0), q.i64(1), &r.start, &r.end)) return false;
    r.device = device(q.i64(2));
    r.stream = static_cast<int32_t>(q.i64(3));
    r.correlation = id(q.i64(4), q.i64(5));
    return true;
  }
  // Launch dimensions within CUDA's limits, else unknown (zeros) and counted.
  std::array<int32_t, 3> dims(const Query& q, int first, const std::array<int64_t, 3>& max) {
    std::array<int32_t, 3> d{};
    for (int k = 0; k < 3; ++k) {
      const int64_t v = q.i64(first + k);
      if (v < 1 || v > max[static_cast<size_t>(k)]) {
        stats_.add(StatId::kNsysBadKernelDims);
        return {};
      }
      d[static_cast<size_t>(k)] = static_cast<int32_t>(v);
    }
    return d;
  }

  void read_kernels() {
    const std::string t = "CUPTI_ACTIVITY_KIND_KERNEL";
    const std::string join = string_join(t, "o", "demangledName", "s");
    each(t,
         "SELECT " + op_columns(t) + ", " + string_value(join, "s") + ", o.gridX, o.gridY, o.gridZ, o.blockX, " +
             "o.blockY, o.blockZ, " + col(t, "o", "registersPerThread") + ", " + col(t, "o", "staticSharedMemory") +
             ", " + col(t, "o", "dynamicSharedMemory") + " FROM " + t + " o" + join,
         [&](Query& q) {
           GpuOpRecord r;
           if (!op(q, r)) return;
           r.name = name(q, 6);
           r.grid = dims(q, 7, {INT32_MAX, 65535, 65535});
           r.block = dims(q, 10, {1024, 1024, 64});
           const int64_t regs = q.i64(13);
           r.registers = regs >= 0 && regs <= 32767 ? static_cast<int16_t>(regs) : int16_t{-1};
           const int64_t shared = q.i64(14, 0) + q.i64(15, 0);
           r.shared_mem = shared >= 0 && shared <= INT32_MAX ? static_cast<int32_t>(shared) : -1;
           append_gpu_op(tl_.gpu_ops, r);
         });
  }

  int64_t bytes(int64_t b) {
    if (b >= 0 && b <= (int64_t{1} << 48)) return b;
    stats_.add(StatId::kNsysBadCopySizes);
    return 0;
  }

  void read_copies() {
    const std::string t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    each(t,
         "SELECT " + op_columns(t) + ", o.bytes, o.copyKind, " + col(t, "o", "srcKind") + ", " +
             col(t, "o", "dstKind") + " FROM " + t + " o",
         [&](Query& q) {
           GpuOpRecord r;
           if (!op(q, r)) return;
           r.kind = GpuOpKind::kMemcpy;
           r.bytes = bytes(q.i64(6));
           r.copy_kind = cupti_copy_kind(q.i64(7));  // nsys keeps CUPTI's CUpti_ActivityMemcpyKind
           r.src = mem_kind(q, 8);
           r.dst = mem_kind(q, 9);
           r.name = tl_.strings.intern(copy_name(r.copy_kind, r.src, r.dst));
           append_gpu_op(tl_.gpu_ops, r);
         });
  }

  void read_sets() {
    const std::string t = "CUPTI_ACTIVITY_KIND_MEMSET";
    each(t, "SELECT " + op_columns(t) + ", o.bytes, " + col(t, "o", "memKind") + " FROM " + t + " o", [&](Query& q) {
      GpuOpRecord r;
      if (!op(q, r)) return;
      r.kind = GpuOpKind::kMemset;
      r.bytes = bytes(q.i64(6));
      r.dst = mem_kind(q, 7);
      r.name = tl_.strings.intern(set_name(r.dst));
      append_gpu_op(tl_.gpu_ops, r);
    });
  }

  void read_syncs() {
    const std::string t = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    each(t, "SELECT " + op_columns(t) + ", o.syncType FROM " + t + " o", [&](Query& q) {
      int64_t start = 0, end = 0;
      if (!span(q.i64(0), q.i64(1), &start, &end)) return;
      timeline::SyncEvents& s = tl_.sync_events;
      s.pid.push_back(pid_of(q.i64(5)));
      s.tid.push_back(-1);  // the runtime call with its correlation names the thread
      s.device.push_back(q.null(2) ? int16_t{-1} : device(q.i64(2)));
      s.stream.push_back(static_cast<int32_t>(q.i64(3)));
      s.kind.push_back(cupti_sync_kind(q.i64(6)));  // CUPTI's CUpti_ActivitySynchronizationType
      s.start.push_back(start);
      s.end.push_back(end);
      s.correlation.push_back(id(q.i64(4), q.i64(5)));
      s.event_stream.push_back(-1);  // nsys keeps no event record a wait can be tied to
      s.event_correlation.push_back(-1);
    });
  }

  // NVTX push/pop and start/end ranges become user annotations (and steps when named
  // like one); a range without an end (still open when the capture stopped) is counted.
  void read_nvtx() {
    const std::string t = "NVTX_EVENTS";
    const std::string join = string_join(t, "e", "textId", "s");
    each(t,
         "SELECT e.start, e.end, e.eventType, " + col(t, "e", "text") + ", " + string_value(join, "s") + ", " +
             col(t, "e", "globalTid") + " FROM " + t + " e" + join,
         [&](Query& q) {
           const int64_t type = q.i64(2);
           if (type != kNvtxPushPop && type != kNvtxStartEnd) return;  // marks, domains, names
           if (q.null(1)) {
             stats_.add(StatId::kNsysNvtxUnclosed);
             return;
           }
           int64_t start = 0, end = 0;
           if (!span(q.i64(0), q.i64(1), &start, &end)) return;
           const std::string text = q.null(3) ? q.text(4) : q.text(3);
           append_annotation(tl_.cpu_ranges, pid_of(q.i64(5)), tid_of(q.i64(5)), tl_.strings.intern(text), start, end);
         });
  }

  sqlite3* db_;
  int32_t source_;
  timeline::Timeline& tl_;
  timeline::ImportStats& stats_;
  std::set<std::string> tables_;
  std::unordered_map<std::string, std::set<std::string>> columns_;
  std::unordered_map<int64_t, MemKind> mem_kinds_;
  int64_t offset_ = 0;
  int64_t spans_ = 0, bad_spans_ = 0;
  size_t first_call_ = tl_.runtime_calls.size();
  size_t first_sync_ = tl_.sync_events.size();
  size_t first_range_ = tl_.cpu_ranges.size();
};

// An open database, closed when it goes.
struct Database {
  sqlite3* db = nullptr;
  ~Database() { sqlite3_close(db); }
};

// Reads an export held in memory (a gzipped one, inflated; the fuzzer's bytes).
Status import_bytes(std::string& bytes, int32_t source, timeline::Timeline& tl, timeline::ImportStats& stats) {
  Database d;
  if (sqlite3_open_v2(":memory:", &d.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    return Status::Error(ErrorCode::kInternal, "cannot open SQLite in memory");
  }
  auto* data = reinterpret_cast<unsigned char*>(bytes.data());
  const auto n = static_cast<sqlite3_int64>(bytes.size());
  if (sqlite3_deserialize(d.db, "main", data, n, n, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
    return Status::Error(ErrorCode::kInput, std::string("not a readable SQLite database: ") + sqlite3_errmsg(d.db));
  }
  return Reader(d.db, source, tl, stats).run();
}

class NsysImporter final : public Importer {
 public:
  std::string_view name() const override { return "nsys"; }
  std::string_view description() const override {
    return "Nsight Systems SQLite export (report.sqlite, from nsys export --type sqlite)";
  }
  std::vector<std::string_view> file_suffixes() const override { return {".sqlite", ".sqlite.gz"}; }
  bool sniff(std::string_view head) const override { return sniff_nsys(head); }
  Status import(const std::string& path, int32_t source_index, timeline::Timeline& tl, timeline::ImportStats& stats,
                const ImportOptions&) override {
    if (gzipped(path)) return import_gzip(path, source_index, tl, stats);
    Database d;
    if (sqlite3_open_v2(path.c_str(), &d.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      return Status::Error(ErrorCode::kIo, "cannot open '" + path + "': " + sqlite3_errmsg(d.db));
    }
    return Reader(d.db, source_index, tl, stats).run();
  }

 private:
  // The file's own first bytes (read_head gives them inflated) are gzip's magic.
  static bool gzipped(const std::string& path) {
    char m[2] = {};
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    const bool two = std::fread(m, 1, 2, f) == 2;
    std::fclose(f);
    return two && is_gzip(std::string_view(m, 2));
  }
  static Status import_gzip(const std::string& path, int32_t source, timeline::Timeline& tl,
                            timeline::ImportStats& stats) {
    auto in = open_file(path);
    if (!in.ok()) return in.status();
    std::string bytes;
    std::array<char, 1 << 16> buf{};
    for (;;) {
      auto got = in.value()->read(buf.data(), buf.size());
      if (!got.ok()) return got.status();
      if (got.value() == 0) break;
      if (bytes.size() + got.value() > kMaxInflatedBytes) {
        return Status::Error(ErrorCode::kUnsupported,
                             "'" + path + "' inflates to more than 4 GiB: gunzip it and analyze the .sqlite");
      }
      bytes.append(buf.data(), got.value());
    }
    if (in.value()->truncated()) stats.add(StatId::kNsysDamaged);
    return import_bytes(bytes, source, tl, stats);
  }
};

}  // namespace

bool sniff_nsys(std::string_view head) {
  return head.size() >= sizeof kSqliteMagic && std::memcmp(head.data(), kSqliteMagic, sizeof kSqliteMagic) == 0;
}

Status import_nsys_buffer(std::string_view bytes, int32_t source_index, timeline::Timeline& tl,
                          timeline::ImportStats& stats) {
  std::string copy(bytes);  // SQLite reads the pages in place
  return import_bytes(copy, source_index, tl, stats);
}

std::unique_ptr<Importer> make_nsys_importer() { return std::make_unique<NsysImporter>(); }

}  // namespace chokepoint::importers
