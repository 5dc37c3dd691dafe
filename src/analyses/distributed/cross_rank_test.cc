#include "analyses/distributed/cross_rank.h"

#include <gtest/gtest.h>

namespace chokepoint::analyses::distributed {
namespace {

constexpr TimeNs kMs = 1'000'000;

// A rank of `steps` 10 ms steps, each ending in one all-reduce: the rank arrives at
// `arrive` ms into the step and every rank leaves at 9 ms (the collective ends together).
RankSummary rank(int32_t r, int steps, double arrive_ms, TimeNs clock = 0) {
  RankSummary s;
  s.rank = r;
  s.world_size = 4;
  s.backend = "nccl";
  s.nvlink_gen = 4;
  s.step_ms = 10;
  s.compute_ms = 6;
  for (int k = 0; k < steps; ++k) {
    const TimeNs t0 = k * 10 * kMs + clock;
    s.step_numbers.push_back(k + 1);
    s.step_start.push_back(t0);
    s.step_end.push_back(t0 + 10 * kMs);
    Collective c;
    c.kind = CollectiveKind::kAllReduce;
    c.bytes = 64 << 20;
    c.step = k + 1;
    c.start = t0 + static_cast<TimeNs>(arrive_ms * kMs);
    c.end = t0 + 9 * kMs;
    c.exposed = c.end - c.start;  // nothing beside it
    s.collectives.push_back(c);
  }
  s.comm_ms = 9 - arrive_ms;
  return s;
}

TEST(CrossRank, NamesTheRankTheOthersWaitFor) {
  // Rank 2 arrives at 8 ms, the others at 6 ms: they wait 2 ms per step for it.
  const DistributedAnalysis d = analyze_ranks({rank(0, 5, 6), rank(1, 5, 6), rank(2, 5, 8), rank(3, 5, 6)});
  ASSERT_TRUE(d.straggler.has_value());
  EXPECT_EQ(d.straggler->rank, 2);
  EXPECT_DOUBLE_EQ(d.straggler->last_share, 1.0);
  EXPECT_NEAR(d.straggler->extra_ms, 2.0, 1e-9);
  EXPECT_EQ(d.matched_collectives, 5);
  EXPECT_NEAR(d.skew_p50_ms, 2.0, 1e-9);
  // Its exposed communication: 1 ms per step on every rank once the waiting is taken out.
  EXPECT_NEAR(d.exposed_comm_ms, 1.0, 1e-9);
  ASSERT_EQ(d.groups.size(), 1u);
  // 64 MiB in 1 ms, all-reduce over 4 ranks: x 2*3/4.
  ASSERT_TRUE(d.groups[0].bus_gbps.has_value());
  EXPECT_NEAR(*d.groups[0].bus_gbps, 64.0 * (1 << 20) * 1.5 / 1e6, 1e-6);
  EXPECT_EQ(d.link, "NVLink 4");
  // Removing the straggler's 2 ms from a 10 ms step: 1.25x.
  ASSERT_FALSE(d.remedies.empty());
  EXPECT_EQ(d.remedies.front().remedy, whatif::Remedy::kFixStraggler);
  EXPECT_NEAR(d.remedies.front().speedup, 10.0 / 8.0, 1e-9);
}

TEST(CrossRank, BalancedRanksHaveNoStraggler) {
  const DistributedAnalysis d = analyze_ranks({rank(0, 5, 6), rank(1, 5, 6.01), rank(2, 5, 6), rank(3, 5, 6.02)});
  EXPECT_FALSE(d.straggler.has_value());
  EXPECT_LT(d.skew_p95_ms, 0.03);
}

TEST(CrossRank, CollectivesMissingOnOneRankAreNotMatched) {
  RankSummary r3 = rank(3, 5, 6);
  r3.collectives.pop_back();
  const DistributedAnalysis d = analyze_ranks({rank(0, 5, 6), rank(1, 5, 6), rank(2, 5, 8), r3});
  EXPECT_EQ(d.matched_collectives, 4);
}

TEST(CrossRank, AlignsTheClockOfAnotherNode) {
  // Ranks 2 and 3 on a node whose clock reads 37.5 ms ahead.
  std::vector<RankSummary> ranks = {rank(0, 5, 6), rank(1, 5, 6), rank(2, 5, 8, 37'500'000), rank(3, 5, 6, 37'500'000)};
  ranks[2].domain = ranks[3].domain = 1;
  const auto clocks = align_clocks(ranks);
  ASSERT_EQ(clocks.size(), 1u);
  EXPECT_EQ(clocks[0].domain, 1);
  EXPECT_NEAR(clocks[0].offset_ms, 37.5, 1e-6);
  EXPECT_EQ(clocks[0].matched, 10);  // 5 collectives x 2 ranks
  const DistributedAnalysis d = analyze_ranks(ranks);
  ASSERT_TRUE(d.straggler.has_value());
  EXPECT_EQ(d.straggler->rank, 2);
  EXPECT_NEAR(d.straggler->extra_ms, 2.0, 1e-6);
}

TEST(CrossRank, UnalignedClocksMisnameTheStraggler) {
  // The same job without the alignment: the node ahead looks late at everything.
  std::vector<RankSummary> ranks = {rank(0, 5, 6), rank(1, 5, 6), rank(2, 5, 8, 37'500'000), rank(3, 5, 6, 37'500'000)};
  const DistributedAnalysis d = analyze_ranks(ranks);
  ASSERT_TRUE(d.straggler.has_value());
  EXPECT_NE(d.straggler->extra_ms, 2.0);
}

TEST(CrossRank, KernelAndOpNames) {
  EXPECT_EQ(collective_of_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            CollectiveKind::kAllReduce);
  EXPECT_EQ(collective_of_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"), CollectiveKind::kAllGather);
  EXPECT_EQ(collective_of_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), CollectiveKind::kReduceScatter);
  EXPECT_EQ(collective_of_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            CollectiveKind::kSendRecv);
  EXPECT_FALSE(collective_of_kernel("ampere_bf16_s16816gemm").has_value());
  EXPECT_EQ(collective_of_op("gloo:all_reduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(collective_of_op("nccl:_allgather_base"), CollectiveKind::kAllGather);
  EXPECT_FALSE(collective_of_op("aten::mm").has_value());
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kBroadcast, 8), 1.0);
}

}  // namespace
}  // namespace chokepoint::analyses::distributed
