#include "samples/recording_reader.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "samples/meta_json.h"
#include "samples/recording_writer.h"

namespace chokepoint::samples {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class StatCounter {
 public:
  void add(const char* name, Severity severity, const char* description, uint64_t n = 1) {
    for (ReadStat& s : stats_) {
      if (s.name == name) {
        s.count += n;
        return;
      }
    }
    stats_.push_back({name, severity, n, description});
  }
  std::vector<ReadStat> take() { return std::move(stats_); }

 private:
  std::vector<ReadStat> stats_;
};

struct SeriesRef {
  bool known = false;  // false: a metric this version does not know; its values are dropped
  SeriesIndex index = 0;
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
  explicit LineReader(const std::string& path) : gz_(gzopen(path.c_str(), "rb")) {
    if (gz_ != nullptr) gzbuffer(gz_, 1 << 17);
  }
  ~LineReader() {
    if (gz_ != nullptr) gzclose(gz_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool next(std::string& line, bool* whole) {
    line.clear();
    if (gz_ == nullptr) return false;
    char buf[8192];
    while (gzgets(gz_, buf, sizeof buf) != nullptr) {  // gzopen reads plain files as they are
      line += buf;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        *whole = true;
        return true;
      }
    }
    *whole = false;
    return !line.empty();
  }

 private:
  gzFile gz_;
};

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
  if (!have_meta && !have_samples) return Status::Error(dir + " is not a chokepoint recording (no meta.json, no samples.jsonl)");

  Recording rec;
  StatCounter stats;
  if (have_meta) {
    std::ifstream in(meta_path);
    const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!run_meta_from_json(j, &rec.meta)) {
      stats.add("meta_unreadable", Severity::kWarning, "meta.json is not valid recording metadata; run facts are missing");
    }
  } else {
    stats.add("meta_missing", Severity::kWarning, "no meta.json; run facts are missing");
  }
  rec.complete = rec.meta.end_ns.has_value();

  std::map<int64_t, ProcessMeta> seen;  // from the samples file, for a crashed run
  std::map<int64_t, int64_t> exits;
  int64_t last_tick_ns = 0;
  std::vector<SeriesRef> series;
  LineReader in(samples_path.string());
  std::string line;
  bool whole = false;
  while (in.next(line, &whole)) {
    if (!whole) {
      // No newline after it: the writer was cut mid-line. A line counts only once whole.
      if (!line.empty()) stats.add("truncated_last_line", Severity::kWarning, "the last line of samples.jsonl was cut (chokepoint killed while writing); dropped");
      break;
    }
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, false);
    const auto kind = j.is_object() ? j.find("k") : j.end();
    if (kind == j.end() || !kind->is_string()) {
      stats.add("malformed_lines", Severity::kCritical, "lines of samples.jsonl that are not recording records; skipped");
      continue;
    }
    const std::string& k = kind->get_ref<const std::string&>();
    if (k == "tick") {
      const auto t = j.find("t");
      const auto v = j.find("v");
      if (t == j.end() || !t->is_number_integer() || v == j.end() || !v->is_array()) {
        stats.add("malformed_lines", Severity::kCritical, "lines of samples.jsonl that are not recording records; skipped");
        continue;
      }
      if (rec.ticks > 0 && t->get<int64_t>() <= last_tick_ns) {
        // Series are searched by time: a tick must come after the one before.
        stats.add("ticks_out_of_order", Severity::kWarning, "ticks not later than the tick before them; skipped");
        continue;
      }
      last_tick_ns = t->get<int64_t>();
      ++rec.ticks;
      for (const json& pair : *v) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() ||
            pair[0].get<uint64_t>() >= series.size()) {
          stats.add("unknown_series", Severity::kCritical, "tick values naming an undeclared series; skipped");
          continue;
        }
        const SeriesRef& ref = series[pair[0].get<size_t>()];
        if (!ref.known) continue;
        const bool valid = pair[1].is_number();
        rec.samples.append(ref.index, last_tick_ns, valid ? pair[1].get<double>() : 0.0, valid);
      }
    } else if (k == "series") {
      const auto metric = find_metric(string_or(j, "metric"));
      Entity entity;
      const bool entity_ok = parse_entity(string_or(j, "entity"), &entity);
      const auto id_field = j.find("id");
      const size_t id = id_field != j.end() && id_field->is_number_unsigned() ? id_field->get<size_t>() : SIZE_MAX;
      if (id != series.size()) {
        stats.add("malformed_lines", Severity::kCritical, "lines of samples.jsonl that are not recording records; skipped");
        continue;
      }
      if (!metric || !entity_ok) {
        stats.add("unknown_metrics", Severity::kInfo, "series of metrics this chokepoint version does not know; ignored");
        series.push_back({});
        continue;
      }
      series.push_back({true, rec.samples.series_index(*metric, entity)});
    } else if (k == "process") {
      ProcessMeta p;
      if (process_from_json(j, &p)) seen[p.pid] = std::move(p);
    } else if (k == "exit") {
      const auto pid = j.find("pid");
      const auto t = j.find("t");
      if (pid == j.end() || !pid->is_number_integer() || t == j.end() || !t->is_number_integer()) {
        stats.add("malformed_lines", Severity::kCritical, "lines of samples.jsonl that are not recording records; skipped");
        continue;
      }
      exits[pid->get<int64_t>()] = t->get<int64_t>();
    } else {
      stats.add("unknown_records", Severity::kInfo, "record kinds this chokepoint version does not know; ignored");
    }
  }

  if (!rec.complete) {
    stats.add("recording_incomplete", Severity::kWarning, "no end-of-run meta.json: chokepoint stopped without finishing (crash or kill -9); processes rebuilt from samples.jsonl");
    // The start meta has no processes; rebuild them from the samples file.
    for (auto& [pid, p] : seen) {
      bool known = false;
      for (const ProcessMeta& m : rec.meta.processes) known = known || m.pid == pid;
      if (known) continue;
      if (const auto e = exits.find(pid); e != exits.end()) {
        p.exited = true;
        p.last_seen_ns = e->second;
      } else {
        p.last_seen_ns = std::max(p.last_seen_ns, last_tick_ns);
      }
      rec.meta.processes.push_back(std::move(p));
    }
  }
  rec.stats = stats.take();
  return rec;
}

}  // namespace chokepoint::samples
