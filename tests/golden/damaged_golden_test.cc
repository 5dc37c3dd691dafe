// Issue 13, wrong answers from bad data: real H200 recordings and traces with one kind of
// data lost (tests/data/hostile/make_damaged.py made them from tests/data/kineto and
// tests/data/live). Before, each gave a confident verdict: `idle`/`host` at full
// confidence for a GPU lost after a fifth of the run, the same confidence with 13% of
// the kernels' durations gone, and a dropped GPU for a meta.json with one wrong field.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"

namespace {

using chokepoint::rules::Category;
const std::string kData = std::string(CHOKEPOINT_TEST_DATA);
const std::string kDamaged = kData + "/hostile/damaged/";

chokepoint::report::Report analyze(const std::string& path) {
  auto r = chokepoint::golden::analyze_fixture({path});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : chokepoint::report::Report{};
}

bool has_stat(const chokepoint::report::Report& r, const std::string& name) {
  return std::any_of(r.import_stats.begin(), r.import_stats.end(), [&](const auto& s) { return s.name == name; });
}

TEST(DamagedGolden, MostKernelsWithoutADurationGiveNoVerdict) {
  const auto r = analyze(kDamaged + "neg_all.json.gz");
  EXPECT_EQ(r.verdict.bound, Category::kUnknown) << r.verdict.summary;
  EXPECT_EQ(r.verdict.confidence, 0);
  ASSERT_TRUE(r.verdict.data_lost.has_value());
  EXPECT_EQ(r.verdict.data_lost->lost, 168);  // every kernel; the 24 copies kept theirs
  EXPECT_EQ(r.verdict.data_lost->total, 192);
  EXPECT_NE(r.verdict.summary.find("168 of 192 GPU events with a negative or missing duration"), std::string::npos)
      << r.verdict.summary;
  // No remedy is promised from what is left: not in the summary, and no remedy or finding
  // below it carries a gain.
  EXPECT_EQ(r.verdict.summary.find("should give"), std::string::npos) << r.verdict.summary;
  for (const auto& m : r.remedies) {
    EXPECT_FALSE(m.estimated_speedup.has_value()) << m.id << " promises " << *m.estimated_speedup;
    EXPECT_NE(m.estimate_from.find("not estimated"), std::string::npos) << m.id << ": " << m.estimate_from;
  }
  for (const auto& f : r.findings) EXPECT_FALSE(f.estimated_speedup.has_value()) << f.id;
  EXPECT_TRUE(r.what_ifs.empty());
}

// A Kineto trace cut off inside its events, made here from the real healthy_bf16 fixture:
// its first 30% (plain; only CPU ops: it read "a CPU-only trace") and the first 60,000
// bytes of its gzip (3 steps of 0.03 ms, "memory bound" at confidence 0.79). No verdict,
// no estimate, no replay, and the report says the file is cut (a cut that leaves the
// GPU work and its calls keeps its verdict: GoldenHazards.TruncatedTraceKeepsVerdictAndWarns).
TEST(DamagedGolden, ATraceCutInsideItsEventsGivesNoVerdict) {
  const std::string d = ::testing::TempDir() + "/cut_" + std::to_string(getpid());
  std::filesystem::create_directories(d);
  const std::string src = kData + "/kineto/healthy_bf16.json.gz";
  ASSERT_EQ(std::system(("gzip -dc " + src + " | head -c 367943 > " + d + "/cut30.json").c_str()), 0);
  ASSERT_EQ(std::system(("gzip -dc " + src + " | gzip -c | head -c 60000 > " + d + "/cutgz.json.gz").c_str()), 0);
  for (const char* name : {"cut30.json", "cutgz.json.gz"}) {
    SCOPED_TRACE(name);
    const auto r = analyze(d + "/" + name);
    EXPECT_EQ(r.verdict.bound, Category::kUnknown) << r.verdict.summary;
    EXPECT_EQ(r.verdict.confidence, 0);
    EXPECT_NE(r.verdict.summary.find("cut"), std::string::npos) << r.verdict.summary;
    EXPECT_EQ(r.verdict.summary.find("CPU-only"), std::string::npos) << r.verdict.summary;
    EXPECT_TRUE(has_stat(r, "kineto_events_cut"));
    for (const auto& m : r.remedies) EXPECT_FALSE(m.estimated_speedup.has_value()) << m.id;
    EXPECT_FALSE(r.replay.has_value());
  }
  // The whole file is judged as before.
  EXPECT_NE(analyze(src).verdict.bound, Category::kUnknown);
  EXPECT_FALSE(has_stat(analyze(src), "kineto_events_cut"));
  std::filesystem::remove_all(d);
}

TEST(DamagedGolden, SomeKernelsWithoutADurationLowerTheConfidenceByTheirShare) {
  const auto clean = analyze(kData + "/kineto/healthy_bf16.json.gz");
  const auto r = analyze(kDamaged + "neg_some.json.gz");
  ASSERT_TRUE(r.verdict.data_lost.has_value());
  EXPECT_EQ(r.verdict.data_lost->lost, 54);
  EXPECT_EQ(r.verdict.data_lost->total, 422);
  EXPECT_FALSE(clean.verdict.data_lost.has_value());
  EXPECT_EQ(r.verdict.bound, Category::kCompute);  // 13% lost: still judged, less surely
  EXPECT_LT(r.verdict.confidence, clean.verdict.confidence * (1 - 54.0 / 422) + 1e-9);
}

TEST(DamagedGolden, AGpuLostAfterAFifthOfTheRunGivesNoVerdict) {
  const auto r = analyze(kDamaged + "gpu_lost");
  EXPECT_EQ(r.verdict.bound, Category::kUnknown) << r.verdict.summary;
  ASSERT_TRUE(r.verdict.data_lost.has_value());
  EXPECT_EQ(r.verdict.data_lost->what, "GPU utilization reads that failed after the GPU had answered");
  EXPECT_GT(r.verdict.data_lost->share(), 0.75);
  EXPECT_TRUE(has_stat(r, "gpu_reads_failed"));
}

TEST(DamagedGolden, TicksInReverseOrderGiveNoVerdict) {
  const auto r = analyze(kDamaged + "reversed_ticks");
  EXPECT_EQ(r.verdict.bound, Category::kUnknown);
  ASSERT_TRUE(r.verdict.data_lost.has_value());
  EXPECT_EQ(r.verdict.data_lost->what, "ticks out of time order");
  EXPECT_EQ(r.verdict.data_lost->lost, 310);
}

// One field of the wrong type is named and left out; the GPU samples are read as usual and
// the verdict is the clean recording's.
TEST(DamagedGolden, OneWrongFieldInMetaKeepsTheSamples) {
  const auto clean = analyze(kData + "/live/healthy_bf16");
  const auto r = analyze(kDamaged + "meta_wrong_field");
  EXPECT_EQ(r.verdict.bound, clean.verdict.bound);
  EXPECT_DOUBLE_EQ(r.verdict.confidence, clean.verdict.confidence);
  ASSERT_TRUE(r.live.has_value());
  ASSERT_EQ(r.live->gpus.size(), 1u);
  EXPECT_NEAR(r.live->interval_ms, 100, 1);  // rebuilt from the ticks
  const auto it = std::find_if(r.import_stats.begin(), r.import_stats.end(),
                               [](const auto& s) { return s.name == "meta_fields_unreadable"; });
  ASSERT_NE(it, r.import_stats.end());
  EXPECT_NE(it->description.find("interval_ns"), std::string::npos) << it->description;
}

// No meta.json at all: the GPU is rebuilt from its series, judged with less confidence
// (which process used it is unknown), never dropped.
TEST(DamagedGolden, NoMetaRebuildsTheGpuFromTheSamples) {
  const auto clean = analyze(kData + "/live/healthy_bf16");
  const auto r = analyze(kDamaged + "no_meta");
  EXPECT_EQ(r.verdict.bound, clean.verdict.bound) << r.verdict.summary;
  EXPECT_LT(r.verdict.confidence, clean.verdict.confidence);
  EXPECT_GT(r.verdict.confidence, 0);
  EXPECT_TRUE(has_stat(r, "meta_gpus_rebuilt"));
  ASSERT_TRUE(r.live.has_value());
  ASSERT_EQ(r.live->gpus.size(), 1u);
}

}  // namespace
