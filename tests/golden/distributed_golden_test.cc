// Golden tests of `analyze` over the ranks of a distributed job: ranks made from a real
// H200 trace with planted collectives and a planted straggler (tests/data/distributed/
// make_ranks.py, whose header gives the commands), and a real 2-rank gloo job on one H200
// (gpu_gloo.sh) when present.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "pipeline/analyze_pipeline.h"
#include "pipeline/input_plan.h"
#include "pipeline/rank_inputs.h"
#include "published_ceilings.h"
#include "report/json_reporter.h"
#include "report/text_reporter.h"

namespace {

using chokepoint::report::Report;

const std::string kDist = std::string(CHOKEPOINT_TEST_DATA) + "/distributed/";

Report analyze(const std::vector<std::string>& paths) {
  auto r = chokepoint::golden::analyze_fixture(paths);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : Report{};
}

const chokepoint::rules::Finding* finding(const Report& r, const std::string& id) {
  auto it = std::find_if(r.findings.begin(), r.findings.end(), [&](const auto& f) { return f.id == id; });
  return it == r.findings.end() ? nullptr : &*it;
}

TEST(DistributedGolden, PlantedStragglerIsNamedWithItsCauseAndGain) {
  const Report r = analyze({kDist + "straggler8"});
  ASSERT_TRUE(r.distributed.has_value());
  const auto& d = r.distributed->ranks;
  EXPECT_EQ(d.ranks.size(), 8u);
  EXPECT_EQ(d.world_size, 8);
  EXPECT_EQ(d.backend, "nccl");
  ASSERT_TRUE(d.straggler.has_value());
  EXPECT_EQ(d.straggler->rank, 5);
  EXPECT_EQ(d.straggler->cause, "host");          // it sleeps at the start of each step
  EXPECT_NEAR(d.straggler->extra_ms, 3.0, 0.05);  // the planted 3 ms
  EXPECT_EQ(r.distributed->detailed_rank, 5);
  EXPECT_EQ(d.matched_collectives, 6);  // 3 steps x 2 buckets
  EXPECT_NEAR(d.skew_p50_ms, 3.0, 0.05);
  // The what-if: the other ranks stop waiting 3 ms of their step.
  const auto* f = finding(r, "straggler-rank");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->estimated_speedup.has_value());
  EXPECT_NEAR(*f->estimated_speedup, d.step_ms / (d.step_ms - 3.0), 0.01);
  EXPECT_EQ(r.remedies.front().id, "fix-straggler");
  EXPECT_EQ(r.remedies.front().estimate_from, "ranks what-if");
  // The end bucket (12 MiB, 1.2 ms) has nothing beside it; the middle one (24 MiB) hides.
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].bytes, 12 << 20);
  EXPECT_NEAR(d.groups[0].exposed_ms_per_step, 1.2, 0.05);
  EXPECT_LT(d.groups[1].exposed_ms_per_step, 0.05);
  EXPECT_NE(finding(r, "exposed-communication"), nullptr);
  // NCCL's 16-block grids are no low-occupancy problem.
  EXPECT_EQ(finding(r, "low-occupancy"), nullptr);
}

TEST(DistributedGolden, BalancedRanksNameNoStragglerButTheExposedAllReduce) {
  const Report r = analyze({kDist + "balanced4"});
  ASSERT_TRUE(r.distributed.has_value());
  const auto& d = r.distributed->ranks;
  EXPECT_EQ(d.ranks.size(), 4u);
  EXPECT_FALSE(d.straggler.has_value());
  EXPECT_EQ(finding(r, "straggler-rank"), nullptr);
  EXPECT_LT(d.skew_p95_ms, 0.03);  // the planted jitter: up to 20 us
  EXPECT_NEAR(d.exposed_comm_ms, 1.2, 0.05);
  const auto* f = finding(r, "exposed-communication");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->time_share_pct, 100 * 1.2 / d.step_ms, 0.5);
  EXPECT_EQ(r.distributed->detailed_rank, 0);
}

TEST(DistributedGolden, TwoNodesClocksAlignedByTheCollectives) {
  const Report r = analyze({kDist + "two_nodes/node0", kDist + "two_nodes/node1"});
  ASSERT_TRUE(r.distributed.has_value());
  const auto& d = r.distributed->ranks;
  ASSERT_EQ(d.clocks.size(), 1u);
  EXPECT_NEAR(d.clocks[0].offset_ms, 37.5, 0.01);  // node1's clock, planted 37.5 ms ahead
  EXPECT_LT(d.clocks[0].spread_ms, 0.01);
  ASSERT_TRUE(d.straggler.has_value());
  EXPECT_EQ(d.straggler->rank, 2);
  EXPECT_NEAR(d.straggler->extra_ms, 3.0, 0.05);
  EXPECT_TRUE(d.link.empty());  // across nodes the network's figure is unknown
}

TEST(DistributedGolden, RanksRenderInTextAndJson) {
  const Report r = analyze({kDist + "straggler8"});
  std::ostringstream text, json;
  chokepoint::report::RenderOptions o;
  ASSERT_TRUE(chokepoint::report::TextReporter().write(r, text, o).ok());
  ASSERT_TRUE(chokepoint::report::JsonReporter().write(r, json, o).ok());
  EXPECT_NE(text.str().find("Straggler: rank 5"), std::string::npos);
  EXPECT_NE(json.str().find("\"distributed\""), std::string::npos);
  EXPECT_NE(json.str().find("\"straggler-rank\""), std::string::npos);
}

// A real 2-rank DDP job over gloo, both ranks on one H200 (gpu_gloo.sh): rank 1 sleeps
// 20 ms at the start of every step in gloo_straggler, not in gloo_balanced. Unprofiled,
// the straggler run took 33.0 ms per step and the balanced one 11.1 ms (medians of 20
// steps, gloo_*.log): fixing the straggler gains 2.98x (3.06x between the profiled runs).
TEST(DistributedGolden, RealGlooStragglerOnTheH200) {
  const Report r = analyze({kDist + "gloo_straggler"});
  ASSERT_TRUE(r.distributed.has_value());
  const auto& d = r.distributed->ranks;
  EXPECT_EQ(d.backend, "gloo");
  ASSERT_TRUE(d.straggler.has_value());
  EXPECT_EQ(d.straggler->rank, 1);
  EXPECT_EQ(d.straggler->cause, "host");  // time.sleep outside any op
  EXPECT_NEAR(d.straggler->cause_ms, 20.0, 1.0);
  EXPECT_NEAR(d.straggler->extra_ms, 20.0, 1.0);  // rank 0 waits for the 20 ms
  EXPECT_GT(d.straggler->last_share, 0.9);
  const auto* f = finding(r, "straggler-rank");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->estimated_speedup.has_value());
  // The what-if removes the waiting only, not the slower gloo transfers behind the late
  // rank (its second bucket queues behind the first on gloo's worker): 2.29x where the fix
  // measured 2.98x. It stays below the real gain: it never promises more.
  const double measured = 32.983 / 11.064;
  EXPECT_GT(*f->estimated_speedup, 2.0);
  EXPECT_LT(*f->estimated_speedup, measured);
  EXPECT_EQ(r.remedies.front().id, "fix-straggler");

  const Report b = analyze({kDist + "gloo_balanced"});
  ASSERT_TRUE(b.distributed.has_value());
  EXPECT_FALSE(b.distributed->ranks.straggler.has_value());
  EXPECT_EQ(finding(b, "straggler-rank"), nullptr);
  // The balanced profiled step against the straggler's step after the what-if.
  const double after = r.remedies.front().step_ms_after;
  EXPECT_NEAR(after, b.distributed->ranks.step_ms, 0.45 * b.distributed->ranks.step_ms);
  // gloo all-reduces through the host with little compute beside them: exposed.
  EXPECT_NE(finding(b, "exposed-communication"), nullptr);
}

// The 2-GPU DDP recording of `run` (tests/data/live/ddp_2gpu: samples, no traces): its
// ranks' GPUs are judged one by one, and without collectives no straggler is named.
TEST(DistributedGolden, TwoGpuDdpRecordingWithoutTraces) {
  const std::string rec = std::string(CHOKEPOINT_TEST_DATA) + "/live/ddp_2gpu";
  EXPECT_TRUE(chokepoint::pipeline::rank_inputs(chokepoint::pipeline::plan_inputs({rec})).empty());
  const Report r = analyze({rec});
  EXPECT_FALSE(r.distributed.has_value());
  ASSERT_TRUE(r.live.has_value());
  ASSERT_EQ(r.live->gpus.size(), 2u);
  EXPECT_TRUE(r.live->gpus[0].used && r.live->gpus[1].used);
  EXPECT_EQ(finding(r, "straggler-rank"), nullptr);
  EXPECT_EQ(finding(r, "exposed-communication"), nullptr);
}

// The two per-process CUPTI traces of a 2-GPU DDP `run --trace` (tests/data/tracer/ddp,
// recorded on the H200 pair), outside their recording: no RANK to go by, so ranks by their
// GPUs, each process having run NCCL kernels on its own. They were pooled as one rank with
// four device lines and 298 steps. The per-process files of unrelated single-GPU programs
// (tracer/steps: no NCCL, one GPU) stay pooled.
TEST(DistributedGolden, PerProcessCuptiTracesOfADdpJobAreRanksByGpu) {
  const std::string ddp = std::string(CHOKEPOINT_TEST_DATA) + "/tracer/ddp";
  const auto ranks = chokepoint::pipeline::rank_inputs(chokepoint::pipeline::plan_inputs({ddp}));
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].by_device, "GPU 0, pid 653");
  EXPECT_EQ(ranks[1].by_device, "GPU 1, pid 654");
  const Report r = analyze({ddp});
  ASSERT_TRUE(r.distributed.has_value());
  const auto& d = r.distributed->ranks;
  ASSERT_EQ(d.ranks.size(), 2u);
  EXPECT_EQ(r.window.steps, 149);  // the detailed rank's NVTX steps
  for (const auto& row : d.ranks) EXPECT_NEAR(row.step_ms, 10.3, 0.1);
  EXPECT_GT(d.matched_collectives, 1000);  // the all-reduces of both ranks, matched
  const auto stat = std::find_if(r.import_stats.begin(), r.import_stats.end(),
                                 [](const auto& s) { return s.name == "import_ranks_by_device"; });
  ASSERT_NE(stat, r.import_stats.end());
  EXPECT_NE(stat->description.find("rank 1: GPU 1, pid 654"), std::string::npos) << stat->description;
  EXPECT_TRUE(chokepoint::pipeline::rank_inputs(
                  chokepoint::pipeline::plan_inputs({std::string(CHOKEPOINT_TEST_DATA) + "/tracer/steps"}))
                  .empty());
}

TEST(DistributedGolden, OneRankAloneIsThePooledAnalysis) {
  EXPECT_TRUE(chokepoint::pipeline::rank_inputs(chokepoint::pipeline::plan_inputs({kDist + "straggler8/rank0.json.gz"}))
                  .empty());
  EXPECT_EQ(chokepoint::pipeline::rank_inputs(chokepoint::pipeline::plan_inputs({kDist + "straggler8"})).size(), 8u);
  // A directory of unrelated single-GPU traces is neither ranks nor one job: refused,
  // naming the jobs found (it was pooled into one impossible report), where the traces of
  // one program with and without Python stacks are one job.
  EXPECT_TRUE(chokepoint::pipeline::rank_inputs(
                  chokepoint::pipeline::plan_inputs({std::string(CHOKEPOINT_TEST_DATA) + "/kineto"}))
                  .empty());
  const auto mixed = chokepoint::golden::analyze_fixture({std::string(CHOKEPOINT_TEST_DATA) + "/kineto"});
  ASSERT_FALSE(mixed.ok());
  const std::string why = mixed.status().message();
  EXPECT_NE(why.find("different jobs"), std::string::npos) << why;
  EXPECT_NE(why.find("healthy_bf16.json.gz, healthy_bf16_stack.json.gz"), std::string::npos) << why;
  EXPECT_NE(why.find("input_bound.json.gz, input_bound_stack.json.gz"), std::string::npos) << why;
  const std::string k = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";
  EXPECT_TRUE(chokepoint::golden::analyze_fixture({k + "input_bound.json.gz", k + "input_bound_stack.json.gz"}).ok());
}

}  // namespace
