#include "importers/pyspy/pyspy_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace chokepoint::importers {
namespace {

const std::string kData = CHOKEPOINT_TEST_DATA;

std::string frame_name(const samples::PyStacks& s, int32_t stack, size_t depth) {
  const auto& st = s.stacks[stack];
  return depth < st.size() ? s.frames[st[depth]].function : "";
}

// Real py-spy 0.4.3 output of tests/data/pyspy/two_threads.py (record.sh): a main thread
// spinning 200k additions then sleeping 20 ms, a thread named "feeder" doing the same
// with 50k and 5 ms, for 1 s.
TEST(PySpyReader, ReadsThreadsStacksAndTimes) {
  PySpyReadStats stats;
  auto r = read_pyspy_chrometrace(kData + "/pyspy/two_threads.chrometrace.json.gz", 1'000'000'000'000, &stats);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const samples::PyStacks& s = r.value();
  EXPECT_FALSE(stats.truncated);
  EXPECT_EQ(stats.skipped, 0u);
  ASSERT_EQ(s.threads.size(), 2u);
  std::map<std::string, int32_t> by_name;
  for (size_t i = 0; i < s.threads.size(); ++i) by_name[s.threads[i].name] = static_cast<int32_t>(i);
  ASSERT_TRUE(by_name.count("MainThread"));
  ASSERT_TRUE(by_name.count("feeder"));
  const auto& main = s.threads[by_name["MainThread"]];
  EXPECT_GT(main.tid, 0);
  EXPECT_EQ(main.tid, main.pid);  // the main thread's OS id is the process id
  EXPECT_NE(s.threads[by_name["feeder"]].tid, main.tid);

  // Time per innermost function of each thread: both spin and sleep, on lines of the script.
  std::map<std::pair<int32_t, std::string>, double> ms;
  int64_t first = INT64_MAX, last = 0;
  for (const auto& g : s.segments) {
    ASSERT_GT(g.end_ns, g.start_ns);
    first = std::min(first, g.start_ns);
    last = std::max(last, g.end_ns);
    ms[{g.thread, frame_name(s, g.stack, 0)}] += (g.end_ns - g.start_ns) / 1e6;
  }
  // ts 0 is the origin given; the program ran about 1 s after py-spy started it.
  EXPECT_GE(first, 1'000'000'000'000);
  EXPECT_NEAR((last - first) / 1e9, 1.0, 0.3);
  const int32_t m = by_name["MainThread"], f = by_name["feeder"];
  EXPECT_GT((ms[{m, "spin"}]), 100);  // the main thread spins most of its second
  EXPECT_GT((ms[{f, "worker"}] + ms[{f, "spin"}]), 100);
  // Frames keep their file and line: spin's loop is on line 8 or 9 of the script.
  bool found = false;
  for (const auto& fr : s.frames) {
    if (fr.function == "spin" && fr.file.find("two_threads.py") != std::string::npos) {
      EXPECT_TRUE(fr.line == 8 || fr.line == 9) << fr.line;
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Segments are sorted by thread, then time, and never overlap within a thread.
  for (size_t i = 1; i < s.segments.size(); ++i) {
    const auto& a = s.segments[i - 1];
    const auto& b = s.segments[i];
    ASSERT_TRUE(a.thread < b.thread || (a.thread == b.thread && a.end_ns <= b.start_ns));
  }
}

TEST(PySpyReader, CutFileKeepsWhatCameBefore) {
  const std::string j =
      R"([{"args":{"filename":"","line":0},"cat":"py-spy","name":"thread (77): MainThread","ph":"B","pid":77,"tid":1,"ts":0},
{"args":{"filename":"t.py","line":3},"cat":"py-spy","name":"f","ph":"B","pid":77,"tid":1,"ts":0},
{"args":{"filename":"t.py","line":3},"cat":"py-spy","name":"f","ph":"E","pid":77,"tid":1,"ts":10000},
{"args":{"filename":"t.py","line":5},"cat":"py-spy","name":"g","ph":"B","pid":77,"tid":1,"ts":10000},
{"args":{"filename":"t.py","line":5},"cat":"py-spy","name":"g","ph":"E","pid":77,"tid":1,"ts":30000},
{"args":{"filename":"t.py","line":7},"cat":"py-sp)";
  PySpyReadStats stats;
  auto r = parse_pyspy_chrometrace(j, 5'000, &stats);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(stats.truncated);
  ASSERT_EQ(r->segments.size(), 2u);
  EXPECT_EQ(r->segments[0].start_ns, 5'000);
  EXPECT_EQ(r->segments[0].end_ns, 5'000 + 10'000'000);
  EXPECT_EQ(frame_name(r.value(), r->segments[1].stack, 0), "g");
  EXPECT_EQ(r->segments[1].end_ns, 5'000 + 30'000'000);
  EXPECT_EQ(r->threads[0].tid, 77);
}

TEST(PySpyReader, RejectsWhatIsNotAnEventArray) {
  EXPECT_FALSE(parse_pyspy_chrometrace(R"({"traceEvents": []})", 0).ok());
  EXPECT_FALSE(parse_pyspy_chrometrace("not json", 0).ok());
  auto empty = parse_pyspy_chrometrace("[]", 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(PySpyReader, UnmatchedEndsAndOtherPhasesAreCounted) {
  const std::string j = R"([{"args":{"filename":"t.py","line":3},"name":"f","ph":"E","pid":1,"tid":1,"ts":5},
{"args":{"filename":"","line":0},"name":"thread_name","ph":"M","pid":1,"tid":1,"ts":0}])";
  PySpyReadStats stats;
  auto r = parse_pyspy_chrometrace(j, 0, &stats);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(stats.skipped, 2u);
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace chokepoint::importers

namespace chokepoint::importers {
namespace {

// Found by fuzz/pyspy_fuzzer: time going back within a thread, and one OS thread under two
// chrometrace ids, must not give overlapping segments.
TEST(PySpyReader, SegmentsNeverOverlapWithinAThread) {
  const std::string j =
      R"([{"args":{"filename":"","line":0},"name":"thread (9): MainThread","ph":"B","pid":9,"tid":1,"ts":0},
{"args":{"filename":"t.py","line":1},"name":"f","ph":"B","pid":9,"tid":1,"ts":0},
{"args":{"filename":"t.py","line":1},"name":"f","ph":"E","pid":9,"tid":1,"ts":100},
{"args":{"filename":"t.py","line":2},"name":"g","ph":"B","pid":9,"tid":1,"ts":50},
{"args":{"filename":"t.py","line":2},"name":"g","ph":"E","pid":9,"tid":1,"ts":200},
{"args":{"filename":"","line":0},"name":"thread (9): MainThread","ph":"B","pid":9,"tid":2,"ts":150},
{"args":{"filename":"t.py","line":3},"name":"h","ph":"B","pid":9,"tid":2,"ts":150},
{"args":{"filename":"t.py","line":3},"name":"h","ph":"E","pid":9,"tid":2,"ts":300}])";
  auto r = parse_pyspy_chrometrace(j, 0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->threads.size(), 1u);  // both ids name OS thread 9
  const auto& segs = r->segments;
  ASSERT_EQ(segs.size(), 3u);
  for (size_t i = 1; i < segs.size(); ++i) EXPECT_LE(segs[i - 1].end_ns, segs[i].start_ns);
  EXPECT_EQ(segs[1].start_ns, 100'000);  // g's late start counts from f's end
  EXPECT_EQ(segs[2].start_ns, 200'000);  // h starts where g ended
  EXPECT_EQ(segs[2].end_ns, 300'000);
}

}  // namespace
}  // namespace chokepoint::importers
