// Writes a recording directory (docs/RECORDING.md): meta.json at start, rewritten
// atomically (temp file + rename) at the end, and samples.jsonl appended as ticks come.
//
// Why JSON Lines rather than a binary layout: a line is the unit of loss, so a kill -9
// can cut at most the line being written, which the reader drops and counts; every tool
// (jq, grep, pandas) reads it; and the cost is small at sampling rates (18 us and 4.3 KB
// for a tick of 411 samples, docs/BENCHMARKS.md), far below the /proc reads that
// produce the tick. Series are declared once ({"k":"series"}) and ticks then carry
// [series id, value] pairs, which keeps a tick of a 1000-thread tree to a few KB.
//
// Durability: each tick is one write(2) of whole lines straight to the file (no user
// space buffer), so after append() returns the tick is in the page cache and survives
// the death of chokepoint; only a machine crash loses what the kernel has not flushed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "samples/metadata.h"
#include "samples/series.h"

namespace chokepoint::samples {

inline constexpr const char* kMetaFile = "meta.json";
inline constexpr const char* kSamplesFile = "samples.jsonl";
inline constexpr const char* kSamplesGzFile = "samples.jsonl.gz";  // read only (test fixtures)

// "chokepoint-20250131-142501" in local time: the default `-o` directory.
std::string default_recording_dir(int64_t realtime_ns);

class RecordingWriter {
 public:
  // Creates `dir` (and parents), an empty samples.jsonl (exclusively, never through a
  // link) and meta.json. Fails when the directory already holds files of a recording
  // (existing_recording_files()): never mix two runs, never overwrite one; with `replace`
  // those files are removed first.
  static Result<std::unique_ptr<RecordingWriter>> create(const std::string& dir, const RunMeta& start_meta,
                                                         bool replace = false);
  ~RecordingWriter();
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // One tick: new series declarations and the tick line, in one write(2).
  Status append(const Tick& tick);
  // A process of the tree appeared / went away (also kept in the final meta.json).
  Status process_seen(const ProcessMeta& process);
  Status process_exited(int64_t pid, int64_t realtime_ns);
  // Rewrites meta.json with the end-of-run fields and closes the samples file.
  Status finish(const RunMeta& final_meta);
  // Closes and removes what create() wrote (samples.jsonl, meta.json) and the directory
  // when create() made it and it is empty now: a run that never started leaves nothing.
  void discard();

  const std::string& dir() const { return dir_; }
  uint64_t bytes_written() const { return bytes_written_; }

  // The tick's lines as append() writes them (exposed for the benchmark and tests).
  const std::string& encode(const Tick& tick);

 private:
  RecordingWriter(std::string dir, int fd, std::vector<std::string> created_dirs)
      : dir_(std::move(dir)), fd_(fd), created_dirs_(std::move(created_dirs)) {}
  Status write_all(const std::string& bytes);

  using Key = SeriesKey;

  std::string dir_;
  int fd_ = -1;
  std::vector<std::string> created_dirs_;  // made by create(), deepest first
  uint64_t bytes_written_ = 0;
  std::unordered_map<Key, uint32_t, SeriesKeyHash> series_ids_;
  std::string buffer_;  // reused: no allocation per tick once warm
};

// The Python stack files (live/stack_sampling.h, docs/RECORDING.md): py-spy's output
// (also gzipped), its log, the job's source lines.
inline constexpr const char* kStackFile = "pyspy.json";
inline constexpr const char* kStackLogFile = "pyspy.log";
inline constexpr const char* kSourcesFile = "sources.json";
// Bursts of fast samples: pyspy-burst-N.json (also gzipped).
inline constexpr const char* kStackBurstPrefix = "pyspy-burst-";

// True for the name of a file a recording holds: meta.json, samples.jsonl,
// samples.jsonl.gz, trace-*.cptrace, trace-*.cptrace.gz, pyspy.json(.gz),
// pyspy-burst-N.json(.gz), pyspy.log, sources.json.
bool is_recording_file_name(const std::string& name);
// The names of the recording files in `dir` (is_recording_file_name()), sorted; none when
// `dir` does not exist.
std::vector<std::string> existing_recording_files(const std::string& dir);

// Writes `meta` to DIR/meta.json through a new temporary file, synced, and rename(2)
// (base/safe_write.h), so a reader sees the old or the new file, never half of one.
Status write_meta_atomically(const std::string& dir, const RunMeta& meta);

}  // namespace chokepoint::samples
