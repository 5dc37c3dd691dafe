#include "bench/judge.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "bench/bench_run.h"
#include "bench/expectations.h"
#include "bench/testing/canned_profiles.h"

namespace chokepoint::bench {
namespace {

using machine::Measurement;
using machine::Profile;

// The canned H200 run, judged without reading this machine's host facts.
Profile judged(const std::function<void(Profile&)>& edit = {}) {
  auto p = machine::parse_profile(testing::kH200Raw);
  EXPECT_TRUE(p.ok());
  Profile prof = std::move(p).value();
  if (edit) edit(prof);
  judge(prof, nullptr);  // no rules: the engine's causes are tested in rules/checks/bench_test.cc
  return prof;
}

const Measurement& get(const Profile& p, const char* key) {
  const Measurement* m = p.gpus.at(0).find(key);
  EXPECT_NE(m, nullptr) << key;
  return *m;
}

void set_value(Profile& p, const char* key, double v) { p.gpus[0].find(key)->value = v; }

// The published references the healthy H200's copies and bf16 GEMM are judged against.
void check_h200_references(const Profile& p) {
  const Measurement& h2d = get(p, "h2d_pinned");
  EXPECT_DOUBLE_EQ(*h2d.reference, 63.0);
  EXPECT_NEAR(*h2d.pct_of_reference, 84.3, 0.1);
  EXPECT_EQ(h2d.reference_source, "published:H200 SXM PCIe x16 per direction");
  const Measurement& d2d = get(p, "d2d_memcpy");
  EXPECT_DOUBLE_EQ(*d2d.reference, 2400.0);  // HBM / 2: bytes counted once
  EXPECT_NEAR(*d2d.pct_of_reference, 88.5, 0.1);
  EXPECT_NEAR(*get(p, "gemm_bf16").pct_of_reference, 79.9, 0.1);
  EXPECT_DOUBLE_EQ(*get(p, "bidir_pinned").reference, 126.0);
}

TEST(Judge, HealthyH200IsAtPar) {
  const Profile p = judged();
  EXPECT_EQ(p.gpus[0].published_gpu, "H200 SXM");
  for (const char* key : {"h2d_pinned", "d2h_pinned", "bidir_pinned", "d2d_memcpy", "dram_read", "dram_write",
                          "dram_copy", "launch_latency", "graph_node_latency", "launch_sync_roundtrip", "ffma_fp32",
                          "gemm_fp32", "gemm_tf32", "gemm_fp16", "gemm_bf16"}) {
    EXPECT_EQ(get(p, key).verdict, machine::kVerdictOk) << key << ": " << get(p, key).cause;
  }
  check_h200_references(p);
}

TEST(Judge, WaivedAndFailedKeepTheirReason) {
  const Profile p = judged();
  EXPECT_EQ(get(p, "gemm_fp8").verdict, machine::kVerdictWaived);
  EXPECT_NE(get(p, "gemm_fp8").cause.find("no fp8 algorithm"), std::string::npos);
  EXPECT_FALSE(get(p, "gemm_fp8").pct_of_reference.has_value());
  EXPECT_EQ(get(p, "gemm_int8").verdict, machine::kVerdictFailed);
  EXPECT_NE(get(p, "gemm_int8").cause.find("EXECUTION_FAILED"), std::string::npos);
}

TEST(Judge, PageableIsInformationAgainstPinned) {
  const Profile p = judged();
  const Measurement& m = get(p, "h2d_pageable");
  EXPECT_EQ(m.verdict, machine::kVerdictInfo);
  EXPECT_DOUBLE_EQ(*m.reference, 53.1);
  EXPECT_EQ(m.reference_source, "measured:h2d_pinned");
  EXPECT_NEAR(*m.pct_of_reference, 12.2, 0.1);
  // Why pageable copies are slow is the engine's pageable-memcpy (rules/checks/bench_test.cc).
  EXPECT_TRUE(m.cause_rules.empty());
}

TEST(Judge, L2HasNoPublishedFigure) {
  const Profile p = judged();  // named: get() returns a reference into it
  const Measurement& m = get(p, "l2_read");
  EXPECT_EQ(m.verdict, machine::kVerdictInfo);
  EXPECT_FALSE(m.reference.has_value());
  EXPECT_NE(m.cause.find("2.5x the DRAM read"), std::string::npos) << m.cause;
}

TEST(Judge, GenericPcieCauseWhenNothingSpecific) {
  const Profile p = judged([](Profile& p) { set_value(p, "h2d_pinned", 30.0); });
  EXPECT_NE(get(p, "h2d_pinned").cause.find("PCIe switch"), std::string::npos);
}

// The causes the engine finds (here a stand-in finder) are joined in its order, with the
// ids of their rules; none found leaves the generic cause, without an id.
std::vector<machine::BenchCause> two_causes(machine::BenchGroup group, const Measurement&, const machine::GpuProfile&,
                                            const machine::HostInfo&) {
  if (group != machine::BenchGroup::kPcie) return {};
  return {{"pcie-link-degraded", "the link is slow"}, {"numa-mismatch", "the node is far"}};
}

TEST(Judge, TheEngineCausesAreJoinedWithTheirRules) {
  auto raw = machine::parse_profile(testing::kH200Raw);
  ASSERT_TRUE(raw.ok());
  Profile p = std::move(raw).value();
  set_value(p, "h2d_pinned", 25.0);
  set_value(p, "launch_latency", 9.2);
  judge(p, two_causes);
  const Measurement& m = get(p, "h2d_pinned");
  EXPECT_EQ(m.verdict, machine::kVerdictBelowPar);
  EXPECT_EQ(m.cause, "the link is slow; the node is far");
  EXPECT_EQ(m.cause_rules, (std::vector<std::string>{"pcie-link-degraded", "numa-mismatch"}));
  EXPECT_EQ(get(p, "launch_latency").cause, "slow host CPU (single-thread speed sets the launch cost)");
  EXPECT_TRUE(get(p, "launch_latency").cause_rules.empty());
  EXPECT_TRUE(get(p, "d2h_pinned").cause_rules.empty()) << "at par: no cause";
}

TEST(Judge, FasterThanTheDatasheetIsSuspicious) {
  const Profile p = judged([](Profile& p) { set_value(p, "gemm_bf16", 1200.0); });
  EXPECT_EQ(get(p, "gemm_bf16").verdict, machine::kVerdictAbovePublished);
}

TEST(Judge, UnknownGpuIsOnlyInformation) {
  const Profile p = judged([](Profile& p) { p.gpus[0].name = "NVIDIA Future GPU"; });
  EXPECT_EQ(p.gpus[0].published_gpu, "");
  EXPECT_EQ(get(p, "gemm_bf16").verdict, machine::kVerdictInfo);
  EXPECT_NE(get(p, "gemm_bf16").cause.find("no published figure"), std::string::npos);
  EXPECT_EQ(get(p, "launch_latency").verdict, machine::kVerdictOk);  // latencies need no datasheet
}

TEST(Judge, RidgePointsUseMeasuredDramTraffic) {
  const Profile p = judged();
  const auto& r = p.gpus[0].ridge_points;
  ASSERT_EQ(r.size(), 4u);  // fp32, tf32, fp16, bf16 (fp8 waived, int8 failed)
  const auto& bf16 = r[3];
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_DOUBLE_EQ(bf16.hbm_gbps, 4248.0);
  EXPECT_NEAR(bf16.flop_per_byte, 790e3 / 4248.0, 1e-9);
  EXPECT_NEAR(*bf16.published_flop_per_byte, 989e3 / 4800.0, 1e-9);
  EXPECT_EQ(*measured_hbm_gbps(p.gpus[0]), 4248.0);
}

TEST(Judge, CountsAndSelftestFailures) {
  Profile p = judged();
  const machine::VerdictCounts c = machine::count_verdicts(p);
  EXPECT_EQ(c.ok, 15);
  EXPECT_EQ(c.info, 3);
  EXPECT_EQ(c.waived, 1);
  EXPECT_EQ(c.failed, 1);
  EXPECT_FALSE(any_selftest_failed(p));
  Measurement s;
  s.key = "selftest_gemm_bf16";
  s.status = machine::ResultStatus::kFailed;
  p.gpus[0].results.push_back(s);
  EXPECT_TRUE(any_selftest_failed(p));
}

// A published expectation names its figure and a par between 0 and 100%; an expected
// one, a positive value.
void check_expectation_sane(const Expectation& e) {
  if (e.basis == Basis::kPublished) {
    EXPECT_NE(e.published, nullptr) << e.key;
    EXPECT_GT(e.par_pct, 0) << e.key;
    EXPECT_LT(e.par_pct, 100) << e.key;
  }
  if (e.basis == Basis::kExpected) {
    EXPECT_GT(e.expected, 0) << e.key;
  }
}

TEST(Expectations, EveryKeyOnceAndSane) {
  std::set<std::string_view> keys;
  for (const auto& e : expectations()) {
    EXPECT_TRUE(keys.insert(e.key).second) << e.key;
    check_expectation_sane(e);
  }
  EXPECT_NE(expectation_for("selftest_gemm_fp8"), nullptr);
  EXPECT_EQ(expectation_for("nope"), nullptr);
}

TEST(FinishProfile, ModuleErrorBecomesTheMessage) {
  auto r = finish_profile(R"({"schema": "chokepoint.profile/1", "error": "no usable GPU: no CUDA device is visible"})",
                          nullptr, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "no usable GPU: no CUDA device is visible");
  auto g = finish_profile(R"({"schema": "chokepoint.profile/1", "gpus": [{"index": 0, "error": "cannot initialise"}]})",
                          nullptr, nullptr);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message().rfind("no usable GPU", 0), 0u);
  EXPECT_FALSE(finish_profile("garbage", nullptr, nullptr).ok());
}

TEST(FinishProfile, JudgesAndStamps) {
  auto r = finish_profile(testing::kH200Raw, nullptr, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->tool_version.empty());
  EXPECT_FALSE(r->created_utc.empty());
  EXPECT_EQ(r->gpus[0].find("gemm_bf16")->verdict, machine::kVerdictOk);
}

TEST(SplitByGpuName, OneProfilePerModel) {
  auto p = machine::parse_profile(testing::kH200Raw).value();
  p.gpus.push_back(p.gpus[0]);
  p.gpus.back().index = 1;
  p.gpus.push_back(p.gpus[0]);
  p.gpus.back().name = "NVIDIA L4";
  const auto parts = split_by_gpu_name(p);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].first, "NVIDIA H200");
  EXPECT_EQ(parts[0].second.gpus.size(), 2u);
  EXPECT_EQ(parts[1].second.gpus.size(), 1u);
  EXPECT_EQ(parts[1].second.mode, "full");
}

}  // namespace
}  // namespace chokepoint::bench
