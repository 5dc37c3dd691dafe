// Hand-made inputs for each hazard of docs/FORMATS.md "Kineto trace": the import must not fail,
// must keep everything readable, and must count what it skipped or repaired.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "importers/kineto/kineto_importer.h"

namespace chokepoint::importers {
namespace {

using timeline::Timeline;

constexpr const char* kHead =
    "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\"id\": 0, \"name\": \"GPU0\", "
    "\"numSms\": 10}\n  ],\n  \"baseTimeNanoseconds\": 1000000000000,\n  \"traceEvents\": [\n";

std::string kernel(const std::string& ts, const std::string& name = "k", const std::string& more_args = "") {
  return "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
         "\", \"pid\": 0, \"tid\": 7,\n    \"ts\": " + ts +
         ", \"dur\": 2,\n    \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 5" + more_args + "}\n  }";
}

std::string step(int n, const std::string& ts) {
  return "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(n) +
         "\", \"pid\": 9, \"tid\": 9, \"ts\": " + ts + ", \"dur\": 100}";
}

std::string trace(const std::vector<std::string>& events, const std::string& tail = "") {
  std::string s = kHead;
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "") + events[i];
  return s + "\n  ]" + tail + "\n}\n";
}

struct Imported {
  Status status;
  Timeline tl;
  timeline::ImportStats stats;
};

std::unique_ptr<Imported> import(const std::string& bytes, const KinetoLimits& limits = {}) {
  auto r = std::make_unique<Imported>();
  r->status = import_kineto_buffer(bytes, 0, r->tl, r->stats, limits);
  return r;
}

std::vector<std::string> names(const Imported& r) {
  std::vector<std::string> out;
  for (auto id : r.tl.gpu_ops.name) out.emplace_back(r.tl.strings.view(id));
  return out;
}

TEST(KinetoHazards, UnescapedQuotesSkipOnlyTheBadEvent) {
  // Even number of stray quotes: the structure holds, simdjson rejects the event.
  auto even = import(trace({kernel("1", "a"), kernel("2", "say \"hi\" now"), kernel("3", "c")}));
  ASSERT_TRUE(even->status.ok());
  EXPECT_EQ(names(*even), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(even->stats.count("kineto_malformed_event"), 1);
  // Odd: string state flips until the end of the line; the scanner resynchronises.
  auto odd = import(trace({kernel("1", "a"), kernel("2", "6\" screen"), kernel("3", "c")}));
  ASSERT_TRUE(odd->status.ok());
  EXPECT_EQ(names(*odd), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(odd->stats.count("kineto_malformed_event"), 1);
  // The last event of the array.
  auto last = import(trace({kernel("1", "a"), kernel("2", "b\"")}));
  ASSERT_TRUE(last->status.ok());
  EXPECT_EQ(names(*last), (std::vector<std::string>{"a"}));
  EXPECT_EQ(last->stats.count("kineto_truncated"), 0);
}

TEST(KinetoHazards, ControlCharactersAndBadEscapes) {
  auto r = import(trace({kernel("1", "tab\there"), kernel("2", "bad \\q escape"), kernel("3", "short \\u12"),
                         kernel("4", "ok \\\"quoted\\\" \\u00e9")}));
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(names(*r), (std::vector<std::string>{"ok \"quoted\" \xc3\xa9"}));
  EXPECT_EQ(r->stats.count("kineto_malformed_event"), 3);
}

TEST(KinetoHazards, CompactTraceWithStrayQuoteKeepsLaterEvents) {
  // One line, so no newline shows the flipped string state: the broken event seems to
  // run to the end of the file (or past the event-size limit), and a later event
  // boundary shows that it did not.
  std::string events;
  for (int i = 0; i < 200; ++i) {
    // Appended piece by piece: g++ 12 -O3 warns (-Wrestrict, a false positive: GCC bug
    // 105651) on "k" + std::to_string(i) here.
    const std::string name = i == 10 ? std::string("bro\"ken") : std::string("k").append(std::to_string(i));
    events += std::string(i ? "," : "") + R"({"ph":"X","cat":"kernel","name":")" + name + R"(","pid":0,"tid":7,"ts":)" +
              std::to_string(i) + R"(,"dur":1})";
  }
  const std::string bytes = R"({"traceEvents":[)" + events + "]}";
  KinetoLimits small_events;
  small_events.max_value_bytes = 1024;
  for (const KinetoLimits& limits : {KinetoLimits{}, small_events}) {
    auto r = import(bytes, limits);
    ASSERT_TRUE(r->status.ok());
    EXPECT_EQ(r->stats.count("kineto_malformed_event"), 1);
    EXPECT_EQ(r->stats.count("kineto_truncated"), 0);
    ASSERT_EQ(r->tl.gpu_ops.size(), 199u);
    EXPECT_EQ(names(*r)[10], "k11");
    EXPECT_EQ(names(*r).back(), "k199");
  }
}

TEST(KinetoHazards, BareNaAndHugeIntegers) {
  auto r = import(trace({
      "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", "
      "\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 3, \"args\": {\"bytes\": N/A, "
      "\"Comms Id\": 18446744073709551615, \"correlation\": 99999999999999999999}}",
      kernel("N/A", "no_ts"),
      kernel("5", "big_reg", ", \"registers per thread\": 70000, \"grid\": [N/A, 2, 3]"),
  }));
  ASSERT_TRUE(r->status.ok());
  ASSERT_EQ(r->tl.gpu_ops.size(), 2u);
  const auto& g = r->tl.gpu_ops;
  EXPECT_EQ(g.kind[0], timeline::GpuOpKind::kMemcpy);
  EXPECT_EQ(g.bytes[0], -1);
  EXPECT_EQ(g.correlation[0], -1);
  EXPECT_EQ(g.copy_kind[0], timeline::CopyKind::kHtoD);
  EXPECT_EQ(g.src_kind[0], timeline::MemKind::kPageable);
  EXPECT_EQ(g.dst_kind[0], timeline::MemKind::kDevice);
  EXPECT_EQ(g.registers[1], -1);  // 70000 does not fit the column
  EXPECT_EQ(g.grid[1], (std::array<int32_t, 3>{0, 2, 3}));
  EXPECT_EQ(r->stats.count("kineto_bad_number"), 3);    // bytes, ts, grid[0]
  EXPECT_EQ(r->stats.count("kineto_int_overflow"), 1);  // correlation; Comms Id is unread
  EXPECT_EQ(r->stats.count("kineto_missing_timestamp"), 1);
}

TEST(KinetoHazards, EmptyTraceEvents) {
  auto r = import(trace({}));
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->tl.event_count(), 0u);
  EXPECT_EQ(r->stats.count("kineto_empty_trace"), 1);
  EXPECT_EQ(r->stats.count("kineto_no_steps"), 1);
  EXPECT_EQ(r->tl.devices.size(), 1u);
}

TEST(KinetoHazards, CutOffAnywhereKeepsCompleteEvents) {
  const std::string full = trace({step(1, "0"), kernel("1"), kernel("2.5"), kernel("4")});
  const size_t array_open = full.find('[', full.find("\"traceEvents\""));
  size_t previous = 0;
  for (size_t cut = 1; cut < full.size(); ++cut) {
    SCOPED_TRACE(cut);
    auto r = import(full.substr(0, cut));
    if (cut <= array_open) {  // the event array has not begun
      EXPECT_FALSE(r->status.ok());
      continue;
    }
    ASSERT_TRUE(r->status.ok());
    const size_t n = r->tl.event_count();
    EXPECT_GE(n, previous);
    previous = n;
    EXPECT_EQ(r->stats.count("kineto_truncated"), cut <= full.rfind('}') ? 1 : 0);
  }
  EXPECT_EQ(previous, 4u);
}

std::string gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(KinetoHazards, TruncatedGzip) {
  std::vector<std::string> events;
  for (int i = 0; i < 5000; ++i) events.push_back(kernel(std::to_string(i) + ".125"));
  const std::string gz = gzip(trace(events));
  auto r = import(gz.substr(0, gz.size() / 2));
  ASSERT_TRUE(r->status.ok());
  EXPECT_GT(r->tl.gpu_ops.size(), 1000u);
  EXPECT_LT(r->tl.gpu_ops.size(), 5000u);
  EXPECT_EQ(r->stats.count("kineto_gzip_corrupt"), 1);
  EXPECT_EQ(r->stats.count("kineto_truncated"), 1);
  EXPECT_EQ(r->tl.gpu_ops.start[1] - r->tl.gpu_ops.start[0], 1000);
}

TEST(KinetoHazards, DurationsNegativeMissingDuplicated) {
  auto r = import(trace({
      "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg\", \"pid\": 1, \"tid\": 1, "
      "\"ts\": 10, \"dur\": -5}",
      "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"none\", \"pid\": 1, \"tid\": 1, "
      "\"ts\": 20}",
      "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"dup\", \"pid\": 1, \"tid\": 1, "
      "\"ts\": 30, \"dur\": 1, \"dur\": 4}",
  }));
  ASSERT_TRUE(r->status.ok());
  const auto& c = r->tl.cpu_ranges;
  ASSERT_EQ(c.size(), 3u);
  const int64_t base = 1000000000000;
  EXPECT_EQ(c.end[0] - c.start[0], 0);
  EXPECT_EQ(c.end[1] - c.start[1], 0);
  EXPECT_EQ(c.start[2], base + 30000);
  EXPECT_EQ(c.end[2] - c.start[2], 4000);  // the last "dur" wins
  EXPECT_EQ(r->stats.count("kineto_negative_duration"), 1);
  EXPECT_EQ(r->stats.count("kineto_missing_duration"), 1);
  EXPECT_EQ(r->stats.count("kineto_duplicate_key"), 1);
}

TEST(KinetoHazards, GpuEventsOnUndescribedDevice) {
  auto r = import(trace({kernel("1"),
                         "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k3\", \"pid\": 3, "
                         "\"tid\": 1, \"ts\": 2, \"dur\": 1, \"args\": {\"device\": 3}}",
                         "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", "
                         "\"pid\": 3, \"tid\": 1, \"ts\": 3, \"dur\": 1}"}));
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->stats.count("kineto_unknown_device"), 2);
  ASSERT_EQ(r->tl.devices.size(), 2u);
  EXPECT_EQ(r->tl.devices[r->tl.gpu_ops.device[1]].local_id, 3);
  EXPECT_EQ(r->tl.devices[r->tl.gpu_ops.device[1]].name, "");
  EXPECT_EQ(r->tl.gpu_ops.dst_kind[2], timeline::MemKind::kDevice);
}

TEST(KinetoHazards, InvalidUtf8IsRepaired) {
  auto r = import(trace({kernel("1", "a"), kernel("2", "caf\xe9 \xff"), kernel("3", "c")}));
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(names(*r), (std::vector<std::string>{"a", "caf? ?", "c"}));
  EXPECT_EQ(r->stats.count("kineto_invalid_utf8"), 1);
  EXPECT_EQ(r->stats.count("kineto_malformed_event"), 0);
}

TEST(KinetoHazards, StringPidsAndNonObjects) {
  auto r = import(
      trace({"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"x\", \"pid\": \"Spans\", \"tid\": 1, "
             "\"ts\": 1, \"dur\": 1}",
             "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"y\", \"pid\": \"12\", \"tid\": 1, "
             "\"ts\": 1, \"dur\": 1}",
             "  42", "  \"text\"", "  [1, {\"a\": 2}]", "  null", kernel("2")}));
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->stats.count("kineto_non_numeric_pid"), 1);
  EXPECT_EQ(r->stats.count("kineto_non_object_event"), 4);
  ASSERT_EQ(r->tl.cpu_ranges.size(), 1u);
  EXPECT_EQ(r->tl.cpu_ranges.pid[0], 12);  // a numeric string is still a pid
  EXPECT_EQ(r->tl.gpu_ops.size(), 1u);
}

TEST(KinetoHazards, OversizedEventIsSkipped) {
  KinetoLimits limits;
  limits.max_value_bytes = 2000;
  limits.chunk_bytes = 512;
  auto r = import(trace({kernel("1", "a"), kernel("2", std::string(5000, 'x')), kernel("3", "c")}), limits);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(names(*r), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(r->stats.count("kineto_malformed_event"), 1);
}

TEST(KinetoHazards, RepeatedArgsListsKeepTheLast) {
  // Found by the fuzzer: two "Input Dims" lists in one event.
  auto r = import(
      trace({"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
             "\"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {"
             "\"Input Dims\": [[1, 2, 3], [4]], \"Input type\": [\"a\"], "
             "\"Input Dims\": [[5], [6, 7]], \"Input type\": [\"b\", \"c\"]}}"}));
  ASSERT_TRUE(r->status.ok());
  const auto& in = r->tl.op_inputs;
  ASSERT_EQ(in.ops(), 1u);
  ASSERT_EQ(in.num_inputs(0), 2u);
  EXPECT_EQ(r->tl.strings.view(in.input_type(0, 1)), "c");
  ASSERT_EQ(in.rank(0, 1), 2u);
  EXPECT_EQ(in.dim(0, 1, 1), 7);
  EXPECT_EQ(in.dims, (std::vector<int64_t>{5, 6, 7}));
}

TEST(KinetoHazards, HazardFilesReadTheSameInAnyChunkSize) {
  const std::string dir = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/hazards/";
  for (const char* file : {"unescaped_quote.json", "bad_values.json", "duplicate_events.json", "truncated.json",
                           "truncated.json.gz", "invalid_utf8.json"}) {
    std::ifstream f(dir + file, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string bytes = ss.str();
    auto want = import(bytes);
    ASSERT_TRUE(want->status.ok()) << file;
    for (size_t chunk = 1; chunk <= 17; chunk += 4) {
      SCOPED_TRACE(std::string(file) + " chunk " + std::to_string(chunk));
      KinetoLimits limits;
      limits.chunk_bytes = chunk;
      limits.batch_bytes = 3 * chunk;
      auto got = import(bytes, limits);
      ASSERT_TRUE(got->status.ok());
      EXPECT_EQ(got->tl.event_count(), want->tl.event_count());
      EXPECT_EQ(names(*got), names(*want));
      ASSERT_EQ(got->stats.all().size(), want->stats.all().size());
      for (const auto& st : want->stats.all()) EXPECT_EQ(got->stats.count(st.name), st.count);
    }
  }
}

// The fuzzer's seeds, crash reproducers among them (regress_*): each must import in any
// chunk size with the same result.
TEST(KinetoHazards, FuzzSeedsImportTheSameInAnyChunkSize) {
  const std::string dir = std::string(CHOKEPOINT_TEST_DATA) + "/../../fuzz/corpus/kineto";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    std::ifstream f(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    auto whole = import(ss.str());
    KinetoLimits limits;
    limits.chunk_bytes = 7;
    limits.batch_bytes = 100;
    auto split = import(ss.str(), limits);
    EXPECT_EQ(whole->status.ok(), split->status.ok());
    EXPECT_EQ(whole->tl.event_count(), split->tl.event_count());
    ++files;
  }
  EXPECT_GE(files, 10u);
}

TEST(KinetoHazards, NotATrace) {
  auto msg = [](const std::string& bytes) {
    auto r = import(bytes);
    EXPECT_FALSE(r->status.ok());
    return r->status.message();
  };
  EXPECT_EQ(msg(""), "the file is empty");
  EXPECT_EQ(msg("  \n"), "the file holds no JSON");
  EXPECT_EQ(msg("hello world"), "not a JSON trace: it starts with 'h'");
  EXPECT_EQ(msg("\x89PNG\r\n"), "not a JSON trace: it starts with byte 0x89");
  EXPECT_EQ(msg(R"({"device": "NVIDIA H200", "expect": [1, 2]})"), "no traceEvents array: not a Kineto / Chrome trace");
  EXPECT_EQ(msg(R"({"schemaVersion": 1, "deviceProperties": [)"),
            "the file ends before any traceEvents array (truncated?)");
  EXPECT_EQ(msg(R"({"a": 1, ]})"), "malformed JSON at byte 9: expected a member name, found ']'");
}

}  // namespace
}  // namespace chokepoint::importers
