#include "samples/recording_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <cstring>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/read_file.h"
#include "base/stat_catalogue.h"
#include "samples/meta_json.h"
#include "samples/recording_writer.h"

namespace chokepoint::samples {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class StatCounter {
 public:
  void add(StatId id, uint64_t n = 1) { add(id, std::string_view(), n); }
  void add(StatId id, std::string_view detail, uint64_t n = 1) {
    const StatDef& def = stat_def(id);
    for (ReadStat& s : stats_) {
      if (s.name == def.name) {
        s.count += n;
        return;
      }
    }
    stats_.push_back({std::string(def.name), def.severity, n, stat_description(id, detail)});
  }
  std::vector<ReadStat> take() { return std::move(stats_); }

 private:
  std::vector<ReadStat> stats_;
};

struct SeriesRef {
  bool known = false;  // false: a metric this version does not know; its values are dropped
  SeriesIndex index = 0;
  MetricId metric = MetricId::kCount;
  // GPU utilization: read failures after the first good read mean the GPU was lost (a
  // metric never read is one the GPU does not support, not data lost).
  bool gpu_util = false;
  bool answered = false;
  int64_t reads_after = 0, failed_after = 0;
};

// A string field, or "" when absent or of another type (bad input is counted by the
// caller, never thrown).
std::string string_or(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Lines of samples.jsonl, plain or gzipped; `whole` says the line ended with a newline.
class LineReader {
 public:
  // Only a regular file is read (a FIFO planted as samples.jsonl would block: base/read_file.h).
  explicit LineReader(const std::string& path) {
    Result<int> fd = open_regular_file(path);
    if (!fd.ok()) {
      error_ = fd.status().message();
      return;
    }
    gz_ = gzdopen(fd.value(), "rb");  // takes the fd; gzdopen reads plain files as they are
    if (gz_ == nullptr) {
      ::close(fd.value());
      error_ = "cannot read '" + path + "'";
      return;
    }
    gzbuffer(gz_, 1 << 17);
  }
  const std::string& error() const { return error_; }
  ~LineReader() {
    if (gz_ != nullptr) gzclose(gz_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // A line longer than kMaxRecordingLineBytes is read to its end but not kept: `line`
  // is left empty and *oversized set. NUL bytes are kept in the line (gzgets would end
  // the line's text at them: a file of NULs read as nothing, without a warning).
  bool next(std::string& line, bool* whole, bool* oversized) {
    line.clear();
    *oversized = false;
    *whole = false;
    if (gz_ == nullptr) return false;
    bool any = false;
    for (;;) {
      if (pos_ == len_) {
        const int n = gzread(gz_, buf_.data(), static_cast<unsigned>(buf_.size()));
        if (n <= 0) return any;
        pos_ = 0;
        len_ = static_cast<size_t>(n);
      }
      any = true;
      const char* start = buf_.data() + pos_;
      const auto* nl = static_cast<const char*>(std::memchr(start, '\n', len_ - pos_));
      const size_t take = nl != nullptr ? static_cast<size_t>(nl - start) : len_ - pos_;
      if (!*oversized && line.size() + take > kMaxRecordingLineBytes) {
        *oversized = true;
        std::string().swap(line);
      }
      if (!*oversized) line.append(start, take);
      pos_ += take;
      if (nl != nullptr) {
        ++pos_;
        *whole = true;
        return true;
      }
    }
  }

 private:
  gzFile gz_ = nullptr;
  std::string error_;
  std::vector<char> buf_ = std::vector<char>(1 << 16);
  size_t pos_ = 0, len_ = 0;
};

// A recording without its end whose recorder (`run` or `watch`, meta.json's recorder_pid)
// still runs on this host is being written (`analyze rec/` while the job runs), not cut
// by a crash. A pid reused by another program is told apart by its name.
bool being_written(const RunMeta& meta) {
  if (meta.recorder_pid <= 0 || meta.recorder_pid > (int64_t{1} << 22)) return false;
  char name[256] = {};
  const auto it = meta.host.find("hostname");
  if (it == meta.host.end() || gethostname(name, sizeof name - 1) != 0 || it->second != name) return false;
  std::ifstream comm("/proc/" + std::to_string(meta.recorder_pid) + "/comm");
  std::string c;
  return std::getline(comm, c) && c == "chokepoint";
}

// The facts meta.json should have given, rebuilt from the samples when it did not (missing,
// unreadable, or one field of the wrong type): the sampling interval from the ticks, and
// the GPUs from their series, so GPU samples that are present are never dropped.
void rebuild_run_facts(Recording& rec, StatCounter& stats) {
  if (rec.meta.interval_ns <= 0) {
    std::vector<int64_t> times;
    for (const Series& s : rec.samples.series()) {
      if (s.entity.kind == EntityKind::kHost) times.insert(times.end(), s.time_ns.begin(), s.time_ns.end());
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    std::vector<int64_t> gaps;
    for (size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
    if (!gaps.empty()) {
      std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
      rec.meta.interval_ns = gaps[gaps.size() / 2];
      stats.add(StatId::kMetaIntervalRebuilt);
    }
  }
  if (!rec.meta.gpus.empty()) return;
  std::set<int64_t> seen;
  for (const Series& s : rec.samples.series()) {
    if (s.entity.kind == EntityKind::kGpu && s.entity.id >= 0 && s.entity.id < 4096) seen.insert(s.entity.id);
  }
  if (seen.empty()) return;
  for (int64_t index : seen) {
    GpuMeta g;
    g.index = static_cast<unsigned>(index);
    // Which GPU the command used is in meta.json only: a GPU that ran anything is judged.
    const Series* util = rec.samples.find(MetricId::kGpuUtilization, Entity::gpu(index));
    g.used = util != nullptr && std::any_of(util->values.begin(), util->values.end(), [](double v) { return v > 0; });
    rec.meta.gpus.push_back(std::move(g));
  }
  rec.meta.gpu_note = "no meta.json, GPUs rebuilt from the samples";
  stats.add(StatId::kMetaGpusRebuilt, seen.size());
}

// What read_samples keeps while it goes through samples.jsonl: the declared series, the
// processes and exits seen (for a crashed run) and the line counts behind the losses.
struct SamplesState {
  std::vector<SeriesRef> series;
  std::map<int64_t, ProcessMeta> seen;  // from the samples file, for a crashed run
  std::map<int64_t, int64_t> exits;
  int64_t last_tick_ns = 0;
  int64_t lines = 0, bad_lines = 0, tick_lines = 0, ticks_skipped = 0;
};

void count_malformed(SamplesState& st, StatCounter& stats) {
  ++st.bad_lines;
  stats.add(StatId::kMalformedLines);
}

// meta.json into rec.meta; what it lacks or gets wrong is counted.
void read_meta(const fs::path& meta_path, bool have_meta, Recording& rec, StatCounter& stats) {
  if (!have_meta) {
    stats.add(StatId::kMetaMissing);
    return;
  }
  const Result<std::string> text = read_regular_file(meta_path.string());
  const json j = text.ok() ? json::parse(text.value(), nullptr, /*allow_exceptions=*/false) : json();
  std::vector<std::string> unreadable;
  if (!run_meta_from_json(j, &rec.meta, &unreadable)) {
    stats.add(StatId::kMetaUnreadable);
    return;
  }
  if (rec.meta.format_version > kRecordingFormatVersion) {
    stats.add(StatId::kMetaNewerFormat, std::to_string(rec.meta.format_version));
  }
  if (!unreadable.empty()) {
    std::string names;
    for (const std::string& n : unreadable) names += (names.empty() ? "" : ", ") + n;
    stats.add(StatId::kMetaFieldsUnreadable, names, unreadable.size());
  }
}

// One [series, value] pair of a tick, appended to its series.
void read_tick_value(const json& pair, Recording& rec, SamplesState& st, StatCounter& stats) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() ||
      pair[0].get<uint64_t>() >= st.series.size()) {
    stats.add(StatId::kUnknownSeries);
    return;
  }
  SeriesRef& ref = st.series[pair[0].get<size_t>()];
  if (!ref.known) return;
  bool valid = pair[1].is_number();
  if (valid && !plausible_value(ref.metric, pair[1].get<double>())) {
    // Read as not sampled: "not supported" never prints as 0, nor damage as a value.
    valid = false;
    stats.add(StatId::kImplausibleValues);
  }
  if (ref.gpu_util && ref.answered) {
    ++ref.reads_after;
    ref.failed_after += !valid;
  }
  ref.answered = ref.answered || valid;
  rec.samples.append(ref.index, st.last_tick_ns, valid ? pair[1].get<double>() : 0.0, valid);
}

void read_tick(const json& j, Recording& rec, SamplesState& st, StatCounter& stats) {
  ++st.tick_lines;
  const auto t = j.find("t");
  const auto v = j.find("v");
  // A tick's time is CLOCK_REALTIME: none is before 1970. Negative times (a damaged or
  // forged file) made the GPU's active window 0 ms and the verdict "io" (issue 47); such
  // ticks are lines that are not records.
  if (t == j.end() || !t->is_number_integer() || t->get<int64_t>() <= 0 || v == j.end() || !v->is_array()) {
    count_malformed(st, stats);
    return;
  }
  if (rec.ticks > 0 && t->get<int64_t>() <= st.last_tick_ns) {
    // Series are searched by time: a tick must come after the one before.
    ++st.ticks_skipped;
    stats.add(StatId::kTicksOutOfOrder);
    return;
  }
  st.last_tick_ns = t->get<int64_t>();
  ++rec.ticks;
  for (const json& pair : *v) read_tick_value(pair, rec, st, stats);
}

void read_series(const json& j, Recording& rec, SamplesState& st, StatCounter& stats) {
  const auto metric = find_metric(string_or(j, "metric"));
  Entity entity;
  const bool entity_ok = parse_entity(string_or(j, "entity"), &entity);
  const auto id_field = j.find("id");
  const size_t id = id_field != j.end() && id_field->is_number_unsigned() ? id_field->get<size_t>() : SIZE_MAX;
  if (id != st.series.size()) {
    count_malformed(st, stats);
    return;
  }
  if (!metric || !entity_ok) {
    stats.add(StatId::kUnknownMetrics);
    st.series.push_back({});
    return;
  }
  SeriesRef ref{true, rec.samples.series_index(*metric, entity), *metric};
  ref.gpu_util = *metric == MetricId::kGpuUtilization;
  st.series.push_back(ref);
}

void read_exit(const json& j, SamplesState& st, StatCounter& stats) {
  const auto pid = j.find("pid");
  const auto t = j.find("t");
  if (pid == j.end() || !pid->is_number_integer() || t == j.end() || !t->is_number_integer()) {
    count_malformed(st, stats);
    return;
  }
  st.exits[pid->get<int64_t>()] = t->get<int64_t>();
}

// One whole, non-empty line of samples.jsonl.
void read_record(const std::string& line, Recording& rec, SamplesState& st, StatCounter& stats) {
  ++st.lines;
  const json j = json::parse(line, nullptr, false);
  const auto kind = j.is_object() ? j.find("k") : j.end();
  if (kind == j.end() || !kind->is_string()) {
    count_malformed(st, stats);
    return;
  }
  const std::string& k = kind->get_ref<const std::string&>();
  if (k == "tick") {
    read_tick(j, rec, st, stats);
  } else if (k == "series") {
    read_series(j, rec, st, stats);
  } else if (k == "process") {
    ProcessMeta p;
    if (process_from_json(j, &p)) st.seen[p.pid] = std::move(p);
  } else if (k == "exit") {
    read_exit(j, st, stats);
  } else {
    stats.add(StatId::kUnknownRecords);
  }
}

void read_samples(LineReader& in, Recording& rec, SamplesState& st, StatCounter& stats) {
  std::string line;
  bool whole = false, oversized = false;
  while (in.next(line, &whole, &oversized)) {
    if (!whole) {
      // No newline after it: the writer was cut mid-line. A line counts only once whole.
      // NUL bytes are no cut record: a file zero-filled by a crash of the machine, or
      // overwritten; they are counted as what they are, lines that are not records.
      if (line.find('\0') != std::string::npos) {
        ++st.lines;
        count_malformed(st, stats);
      } else if (!line.empty() || oversized) {
        stats.add(StatId::kTruncatedLastLine);
      }
      break;
    }
    if (oversized) {
      ++st.lines;
      ++st.bad_lines;
      stats.add(StatId::kOversizedLines);
      continue;
    }
    if (line.empty()) continue;
    read_record(line, rec, st, stats);
  }
}

void add_sample_losses(Recording& rec, const SamplesState& st, StatCounter& stats) {
  add_loss(rec.losses, "lines of samples.jsonl that are not records", st.bad_lines, st.lines);
  add_loss(rec.losses, "ticks out of time order", st.ticks_skipped, st.tick_lines);
  for (const SeriesRef& ref : st.series) {
    if (!ref.gpu_util) continue;
    add_loss(rec.losses, "GPU utilization reads that failed after the GPU had answered", ref.failed_after,
             ref.reads_after);
    if (ref.failed_after > 0) {
      stats.add(StatId::kGpuReadsFailed, static_cast<uint64_t>(ref.failed_after));
    }
  }
}

// The start meta has no processes; rebuild them from the samples file.
void rebuild_processes(Recording& rec, SamplesState& st) {
  for (auto& [pid, p] : st.seen) {
    bool known = false;
    for (const ProcessMeta& m : rec.meta.processes) known = known || m.pid == pid;
    if (known) continue;
    if (const auto e = st.exits.find(pid); e != st.exits.end()) {
      p.exited = true;
      p.last_seen_ns = e->second;
    } else {
      p.last_seen_ns = std::max(p.last_seen_ns, st.last_tick_ns);
    }
    rec.meta.processes.push_back(std::move(p));
  }
}

}  // namespace

const ReadStat* Recording::stat(const std::string& name) const {
  for (const ReadStat& s : stats) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Result<Recording> read_recording(const std::string& dir) {
  const fs::path meta_path = fs::path(dir) / kMetaFile;
  std::error_code ec;
  fs::path samples_path = fs::path(dir) / kSamplesFile;
  // A recording kept as a test fixture may have its samples gzipped.
  if (!fs::exists(samples_path, ec) && fs::exists(fs::path(dir) / kSamplesGzFile, ec)) {
    samples_path = fs::path(dir) / kSamplesGzFile;
  }
  const bool have_meta = fs::exists(meta_path, ec);
  const bool have_samples = fs::exists(samples_path, ec);
  if (!have_meta && !have_samples)
    return Status::Error(ErrorCode::kInput, dir + " is not a chokepoint recording (no meta.json, no samples.jsonl)");

  Recording rec;
  StatCounter stats;
  read_meta(meta_path, have_meta, rec, stats);
  rec.complete = rec.meta.end_ns.has_value();

  SamplesState st;
  LineReader in(samples_path.string());
  if (have_samples && !in.error().empty()) {
    stats.add(StatId::kSamplesUnreadable, in.error());
  }
  read_samples(in, rec, st, stats);
  add_sample_losses(rec, st, stats);

  rebuild_run_facts(rec, stats);

  if (!rec.complete) {
    stats.add(being_written(rec.meta) ? StatId::kRecordingInProgress : StatId::kRecordingIncomplete);
    rebuild_processes(rec, st);
  }
  rec.stats = stats.take();
  return rec;
}

}  // namespace chokepoint::samples
