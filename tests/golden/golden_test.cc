// Golden tests: traces recorded on the H200 by tests/data/workloads/record.py go in, the
// verdict and the finding ids that tests/data/kineto/expected.json names must come out.
// The estimated speedup of each workload's main finding is also checked against the
// speedup its fix really gave on the GPU (measured.json, timed without the profiler).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"

namespace chokepoint {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";

nlohmann::json load(const std::string& name) {
  std::ifstream f(kDir + name);
  return nlohmann::json::parse(f);
}

// The verdict, the findings expected.json names (and those it says are absent), the steps.
void check_verdict_and_findings(const report::Report& rep, const nlohmann::json& expected) {
  EXPECT_EQ(rules::category_name(rep.verdict.bound), expected.at("verdict").get<std::string>()) << rep.verdict.summary;
  std::set<std::string> ids;
  for (const auto& f : rep.findings) ids.insert(f.id);
  for (const auto& id : expected.at("findings")) {
    EXPECT_TRUE(ids.count(id.get<std::string>())) << "missing finding " << id;
  }
  for (const auto& id : expected.value("absent", nlohmann::json::array())) {
    EXPECT_FALSE(ids.count(id.get<std::string>())) << "unexpected finding " << id;
  }
  EXPECT_EQ(rep.window.steps, expected.value("steps", 3));
}

// The what-if of the fix that was measured, against the fix's measured speedup.
void check_main_remedy(const report::Report& rep, const nlohmann::json& expected, const std::string& name) {
  auto all = load("measured.json");
  all.update(load("measured_stack.json"));
  const double real = all.at(name).at("speedup_measured").get<double>();
  const std::string id = expected.at("main_remedy");
  auto it = std::find_if(rep.what_ifs.begin(), rep.what_ifs.end(),
                         [&](const rules::RemedyAdvice& w) { return w.id == id; });
  ASSERT_NE(it, rep.what_ifs.end()) << "no what-if for " << id;
  ASSERT_TRUE(it->estimated_speedup.has_value());
  const double lo = expected.at("speedup_ratio_range")[0], hi = expected.at("speedup_ratio_range")[1];
  EXPECT_GE(*it->estimated_speedup / real, lo)
      << id << " estimated " << *it->estimated_speedup << "x, measured " << real << "x";
  EXPECT_LE(*it->estimated_speedup / real, hi)
      << id << " estimated " << *it->estimated_speedup << "x, measured " << real << "x";
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, VerdictAndFindings) {
  const std::string name = GetParam();
  const auto expected = load("expected.json").at(name);
  auto r = chokepoint::golden::analyze_fixture({kDir + name + ".json.gz"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& rep = r.value();

  check_verdict_and_findings(rep, expected);
  if (expected.contains("main_remedy")) {
    check_main_remedy(rep, expected, name);
    if (HasFatalFailure()) return;
  }
  if (expected.contains("first_remedy_not") && !rep.remedies.empty()) {
    EXPECT_NE(rep.remedies.front().id, expected.at("first_remedy_not").get<std::string>());
  }
}

// A trace cut off mid-file (a crashed job, a full disk) still gives the same verdict from
// the events before the cut, plus a warning in the report.
TEST(GoldenHazards, TruncatedTraceKeepsVerdictAndWarns) {
  const std::string cut = ::testing::TempDir() + "/input_bound_cut_" + std::to_string(getpid()) + ".json";
  ASSERT_EQ(std::system(("gzip -dc " + kDir + "input_bound.json.gz | head -c 600000 > " + cut).c_str()), 0);
  auto r = chokepoint::golden::analyze_fixture({cut});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::string(rules::category_name(r.value().verdict.bound)), "input");
  bool warned = false;
  for (const auto& s : r.value().import_stats) warned |= s.name == "kineto_truncated" && s.count == 1;
  EXPECT_TRUE(warned);
  std::remove(cut.c_str());
}

// Must outlive the test registration (ValuesIn keeps iterators into it).
const std::vector<std::string>& fixture_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    const auto expected = load("expected.json");  // kept alive: items() refers into it
    for (const auto& [k, e] : expected.items()) {
      if (k.front() != '_') v.push_back(k);
    }
    return v;
  }();
  return names;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden, ::testing::ValuesIn(fixture_names()),
                         [](const auto& info) { return info.param; });

// The roofline table by kernel class, on the traces where it read above the HBM rate before
// each kernel took its share of its op's bytes (analyses/index.h op_bytes) and reducing ops
// stopped counting an output as large as their input: fp32_gemm's reductions 118%,
// allocator_churn's 127%, gemv_batch's split-K reductions 3,269% (its GEMV's weights),
// lstm_lm's cuDNN elementwise kernels 284%, tabular_pinned's reductions 161%. Kernels whose
// data sits in the H200's 50 MB L2 could read above 100%; none of these do.
TEST(GoldenRoofline, NoKernelClassMovesMoreThanTheHbmCanOnTheseTraces) {
  const std::string pairs = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/";
  for (const std::string& path :
       {kDir + "fp32_gemm.json.gz", kDir + "allocator_churn.json.gz", pairs + "gemv_batch/trace.json.gz",
        pairs + "lstm_lm/trace.json.gz", pairs + "tabular_pinned/trace.json.gz"}) {
    SCOPED_TRACE(path);
    auto r = chokepoint::golden::analyze_fixture({path});
    ASSERT_TRUE(r.ok()) << r.status().message();
    int with_bytes = 0;
    for (const auto& c : r.value().roofline) {
      if (!c.pct_of_hbm) continue;
      ++with_bytes;
      EXPECT_LE(*c.pct_of_hbm, 100.0) << c.kernel_class << " " << *c.achieved_gbps << " GB/s";
    }
    EXPECT_GE(with_bytes, 1);
  }
}

}  // namespace
}  // namespace chokepoint
