// import_paths(): directories, sniffing, error messages, and the hazard files of
// tests/data/kineto/hazards imported together.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "importers/importer.h"

namespace chokepoint::importers {
namespace {

namespace fs = std::filesystem;
using timeline::Timeline;

const std::string kData = std::string(CHOKEPOINT_TEST_DATA) + "/kineto";

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/registry_testXXXXXX";
    path_ = mkdtemp(name);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& bytes) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string copy(const std::string& from, const std::string& name) const {
    fs::copy_file(from, path_ + "/" + name);
    return path_ + "/" + name;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Status run(const std::vector<std::string>& paths, Timeline& tl, timeline::ImportStats& stats) {
  return import_paths(paths, tl, stats);
}

TEST(Registry, ListsKinetoCuptiAndNsys) {
  auto list = all_importers();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]->name(), "kineto");
  EXPECT_EQ(list[1]->name(), "cupti");
  EXPECT_EQ(list[2]->name(), "nsys");
}

TEST(Registry, DirectoryOfHazardsImportsWithStats) {
  Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(run({kData + "/hazards"}, tl, stats).ok());
  std::vector<std::string> files;
  for (const auto& s : tl.sources) {
    files.push_back(fs::path(s.path).filename().string());
    EXPECT_EQ(s.format, "kineto");
    // baseTimeNanoseconds follows traceEvents: lost when the file is cut off.
    const bool cut = files.back().find("truncated") == 0 || files.back() == "empty_events.json";
    EXPECT_EQ(s.base_time_ns, cut ? 0 : 1790857026000000000) << files.back();
  }
  EXPECT_EQ(files, (std::vector<std::string>{"bad_values.json", "duplicate_events.json", "empty_events.json",
                                             "invalid_utf8.json", "truncated.json", "truncated.json.gz",
                                             "unescaped_quote.json"}));
  EXPECT_EQ(stats.count("kineto_malformed_event"), 4);
  EXPECT_EQ(stats.count("kineto_bad_number"), 2);  // bytes N/A, ts N/A
  EXPECT_EQ(stats.count("kineto_int_overflow"), 1);
  EXPECT_EQ(stats.count("kineto_negative_duration"), 1);
  EXPECT_EQ(stats.count("kineto_duplicate_key"), 1);
  EXPECT_EQ(stats.count("kineto_missing_timestamp"), 1);
  EXPECT_EQ(stats.count("kineto_non_numeric_pid"), 1);
  EXPECT_EQ(stats.count("import_duplicate_events"), 1);
  EXPECT_EQ(stats.count("kineto_unknown_device"), 1);
  EXPECT_EQ(stats.count("kineto_empty_trace"), 1);
  EXPECT_EQ(stats.count("kineto_no_steps"), 1);
  EXPECT_EQ(stats.count("kineto_truncated"), 2);
  EXPECT_EQ(stats.count("kineto_gzip_corrupt"), 1);
  EXPECT_EQ(stats.count("kineto_invalid_utf8"), 1);
  EXPECT_EQ(stats.count("kineto_no_base_time"), 3);
  EXPECT_FALSE(stats.has_errors());
  // Finalized: sorted by start.
  EXPECT_TRUE(std::is_sorted(tl.gpu_ops.start.begin(), tl.gpu_ops.start.end()));
  EXPECT_TRUE(std::is_sorted(tl.cpu_ranges.start.begin(), tl.cpu_ranges.start.end()));
  // A string ts ("5105435920001.5") is a time like any other.
  bool memcpy_found = false;
  for (size_t i = 0; i < tl.gpu_ops.size(); ++i) {
    if (tl.gpu_ops.kind[i] != timeline::GpuOpKind::kMemcpy) continue;
    memcpy_found = true;
    EXPECT_EQ(tl.gpu_ops.start[i], 1790857026000000000 + 5105435920001500);
  }
  EXPECT_TRUE(memcpy_found);
}

TEST(Registry, DirectoryPicksJsonFilesSortedByName) {
  TempDir dir;
  dir.copy(kData + "/small_grid.json.gz", "b_rank1.pt.trace.json.gz");
  dir.copy(kData + "/hazards/empty_events.json", "a_rank0.json");
  dir.file("notes.txt", "not a trace");
  fs::create_directory(dir.path() + "/sub.json");  // directories are not files
  Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(run({dir.path()}, tl, stats).ok());
  ASSERT_EQ(tl.sources.size(), 2u);
  EXPECT_EQ(tl.sources[0].path, dir.path() + "/a_rank0.json");
  EXPECT_EQ(tl.sources[1].path, dir.path() + "/b_rank1.pt.trace.json.gz");
  EXPECT_EQ(tl.gpu_ops.size(), 4u);
  EXPECT_EQ(tl.devices[tl.gpu_ops.device[0]].source_index, 1);
}

TEST(Registry, UnknownFormatFailsWithOneLine) {
  TempDir dir;
  const std::string bad = dir.file("measured.json", R"({"fp32_gemm": {"device": "NVIDIA H200"}})");
  Timeline tl;
  timeline::ImportStats stats;
  Status st = run({bad}, tl, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "cannot read '" + bad +
                "': not a recognized trace format (understood: kineto: PyTorch "
                "profiler Chrome-trace JSON, .json or .json.gz; cupti: chokepoint CUPTI trace (trace-<pid>.cptrace, "
                "written by `chokepoint run --trace`); nsys: Nsight Systems SQLite export (report.sqlite, from nsys "
                "export --type sqlite))");
}

// Issue 13: a valid trace whose first 64 KiB hold no trace key (a large metadata block
// before "traceEvents") was "not a recognized trace format".
TEST(Registry, TraceKeysPastTheFirst64KiBAreFound) {
  TempDir dir;
  const std::string big(100 << 10, 'x');
  const std::string f = dir.file(
      "late.json",
      "{\"otherData\": {\"note\": \"" + big +
          "\"}, \"traceEvents\": ["
          "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 5,"
          " \"args\": {\"device\": 0, \"stream\": 7}}]}");
  Timeline tl;
  timeline::ImportStats stats;
  Status st = run({f}, tl, stats);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(tl.sources.size(), 1u);
  EXPECT_EQ(tl.sources[0].format, "kineto");
  EXPECT_EQ(tl.gpu_ops.size(), 1u);
}

// A run directory holds other JSON beside the traces (tests/data/kineto has
// expected.json and measured.json): those are skipped and counted, not fatal.
TEST(Registry, DirectorySkipsJsonThatIsNotATrace) {
  TempDir dir;
  dir.copy(kData + "/small_grid.json.gz", "trace.json.gz");
  dir.file("measured.json", R"({"fp32_gemm": {"device": "NVIDIA H200"}})");
  dir.file("empty.json", "");
  Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(run({dir.path()}, tl, stats).ok());
  EXPECT_EQ(tl.sources.size(), 1u);
  EXPECT_EQ(stats.count("import_skipped_files"), 2);

  TempDir only_other;
  only_other.file("config.json", R"({"lr": 0.1})");
  Timeline tl2;
  timeline::ImportStats stats2;
  EXPECT_EQ(run({only_other.path()}, tl2, stats2).message(),
            "no recognized trace in '" + only_other.path() +
                "' (understood: kineto: PyTorch profiler Chrome-trace JSON, .json or .json.gz; cupti: chokepoint CUPTI "
                "trace (trace-<pid>.cptrace, written by `chokepoint run --trace`); nsys: Nsight Systems SQLite "
                "export (report.sqlite, from nsys export --type sqlite))");
}

// Issue 13: one trace of a directory that cannot be read (a damaged plain-JSON rank)
// aborted the whole directory while non-trace files were skipped. Now it is left out with
// a warning naming it, and the others are analyzed without any of its rows.
TEST(Registry, ADirectoryTraceThatFailsIsLeftOutNotFatal) {
  TempDir dir;
  dir.copy(kData + "/small_grid.json.gz", "rank0.json.gz");
  // Recognized (a trace's keys), then not a trace: the Kineto importer fails on it, after
  // mapping nothing, and rank2 after it must still be read.
  dir.file("rank1.json", R"({"schemaVersion": 1, "traceEvents": 42})");
  // Another trace (a copy of rank0 would be read once: the same bytes are one input).
  dir.copy(kData + "/elementwise_chain.json.gz", "rank2.json.gz");
  Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(run({dir.path()}, tl, stats).ok());
  EXPECT_EQ(tl.sources.size(), 2u);
  EXPECT_EQ(stats.count("import_failed_files"), 1);
  bool named = false;
  for (const auto& st : stats.all())
    named = named || (st.name == "import_failed_files" && st.description.find("rank1.json") != std::string::npos);
  EXPECT_TRUE(named);
  Timeline one, two;
  timeline::ImportStats one_stats, two_stats;
  ASSERT_TRUE(run({kData + "/small_grid.json.gz"}, one, one_stats).ok());
  ASSERT_TRUE(run({kData + "/elementwise_chain.json.gz"}, two, two_stats).ok());
  EXPECT_EQ(tl.gpu_ops.size(), one.gpu_ops.size() + two.gpu_ops.size());  // nothing half-read kept

  // Named by the user, the same file is still an error.
  Timeline tl2;
  timeline::ImportStats stats2;
  EXPECT_FALSE(run({dir.path() + "/rank1.json"}, tl2, stats2).ok());
  // Every trace of the directory failing is an error that says why.
  TempDir bad;
  bad.file("rank1.json", R"({"schemaVersion": 1, "traceEvents": 42})");
  Timeline tl3;
  timeline::ImportStats stats3;
  const Status st3 = run({bad.path()}, tl3, stats3);
  EXPECT_NE(st3.message().find("the traces could not be read: rank1.json"), std::string::npos) << st3.message();
}

// Issue 13: `analyze DIR --format chrome -o DIR/x.json` and `-f json -o DIR/report.json`
// put chokepoint's own outputs beside the traces; the export read as one more rank.
TEST(Registry, OwnOutputsInADirectoryAreNotRanks) {
  TempDir dir;
  dir.copy(kData + "/small_grid.json.gz", "trace.json.gz");
  dir.file("export.json",
           "{\"traceEvents\":[\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":7,"
           "\"ts\":1,\"dur\":2,\"args\":{\"device\":0,\"stream\":7}}\n],\"displayTimeUnit\":\"ns\","
           "\"otherData\":{\"generator\":\"chokepoint 0.1.0\",\"base_time_ns\":1}}");
  dir.file("report.json", "{\n  \"schema\": \"chokepoint.report/1\",\n  \"traceEvents\": []\n}");
  Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(run({dir.path()}, tl, stats).ok());
  EXPECT_EQ(tl.sources.size(), 1u);
  EXPECT_EQ(stats.count("import_own_outputs"), 2);
}

TEST(Registry, ClearErrors) {
  TempDir dir;
  Timeline tl;
  timeline::ImportStats stats;
  EXPECT_EQ(run({"/nonexistent/x.json"}, tl, stats).message(),
            "cannot read '/nonexistent/x.json': No such file or directory");
  EXPECT_EQ(run({dir.path()}, tl, stats).message(),
            "no trace files (*.json, *.json.gz, *.cptrace, *.cptrace.gz, *.sqlite, *.sqlite.gz) in directory '" +
                dir.path() + "'");
  const std::string empty = dir.file("empty.json", "");
  EXPECT_EQ(run({empty}, tl, stats).message(), "cannot read '" + empty + "': the file is empty");
  const std::string no_events = dir.file("x.json", R"({"ph": "X"})");
  EXPECT_EQ(run({no_events}, tl, stats).message(),
            "cannot read '" + no_events + "': no traceEvents array: not a Kineto / Chrome trace");
  EXPECT_EQ(run({}, tl, stats).message(), "no input trace given");
}

// Callers decide by the code: an I/O error names its file (the registry adds no second
// "cannot read"), bad content stays an input error, said of the file.
TEST(Registry, ErrorsCarryTheirCode) {
  TempDir dir;
  Timeline tl;
  timeline::ImportStats stats;
  EXPECT_EQ(run({"/nonexistent/x.json"}, tl, stats).code(), ErrorCode::kIo);
  EXPECT_EQ(run({dir.path()}, tl, stats).code(), ErrorCode::kInput);
  const std::string no_events = dir.file("x.json", R"({"ph": "X"})");
  const Status bad = run({no_events}, tl, stats);
  EXPECT_EQ(bad.code(), ErrorCode::kInput);  // said of the file: "cannot read 'F': ..."
  EXPECT_EQ(bad.message().find("cannot read", 1), std::string::npos) << bad.message();
}

TEST(Registry, ImportersDeclareTheFilesTheyRead) {
  const auto importers = all_importers();
  EXPECT_EQ(trace_file_patterns(importers), "*.json, *.json.gz, *.cptrace, *.cptrace.gz, *.sqlite, *.sqlite.gz");
  for (const char* name :
       {"trace.json", "rank0.pt.trace.json.gz", "trace-42.cptrace", "trace-42.cptrace.gz", "report.sqlite"}) {
    EXPECT_TRUE(is_trace_file_name(importers, name)) << name;
  }
  for (const char* name : {"meta.json.bak", "samples.jsonl", "trace.cptrace.zst", "README.md", ""}) {
    EXPECT_FALSE(is_trace_file_name(importers, name)) << name;
  }
  for (const auto& imp : importers) EXPECT_FALSE(imp->file_suffixes().empty()) << imp->name();
}

TEST(Registry, ProgressCoversAllFiles) {
  struct Seen {
    uint64_t last = 0, total = 0;
    bool monotonic = true;
  } seen;
  ImportOptions opts;
  opts.progress_ctx = &seen;
  opts.progress = [](void* ctx, uint64_t done, uint64_t total) {
    auto* s = static_cast<Seen*>(ctx);
    s->monotonic = s->monotonic && done >= s->last;
    s->last = done;
    s->total = total;
  };
  Timeline tl;
  timeline::ImportStats stats;
  const std::string a = kData + "/small_grid.json.gz", b = kData + "/pageable_copy.json.gz";
  ASSERT_TRUE(import_paths({a, b}, tl, stats, opts).ok());
  EXPECT_TRUE(seen.monotonic);
  EXPECT_EQ(seen.total, fs::file_size(a) + fs::file_size(b));
  EXPECT_EQ(seen.last, seen.total);
}

}  // namespace
}  // namespace chokepoint::importers
