#include "analyses/rank_sum.h"

#include <gtest/gtest.h>

namespace chokepoint::analyses {
namespace {

// Reference values counted by hand from the definition of U.
TEST(RankTest, ExactSeparatedSamples) {
  const RankTest r = mann_whitney({10, 11, 12, 13}, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(r.u, 16);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 2.0 / 70.0, 1e-12);  // the one most extreme of C(8,4) arrangements, both sides
}

TEST(RankTest, ExactOverlappingSamples) {
  // U = 5 of 9: no evidence of a difference.
  const RankTest r = mann_whitney({1, 4, 6}, {2, 3, 5});
  EXPECT_DOUBLE_EQ(r.u, 5);
  EXPECT_NEAR(r.p_value, 1.0, 1e-12);
  // {1,2,3} vs {4,5,6}: P(U=0) = 1/20, two-sided 0.1: three steps a side can never reach 0.05.
  EXPECT_NEAR(mann_whitney({1, 2, 3}, {4, 5, 6}).p_value, 0.1, 1e-12);
}

TEST(RankTest, NormalApproximationForLargeSamples) {
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(100 + i);
    b.push_back(115 + i);
  }
  const RankTest r = mann_whitney(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 112.5);  // 1 + 2 + ... + 14 pairs a > b, 15 ties
  // By hand: mean 450, variance 900/12 * (61 - 15 * 6 / (60 * 59)), z = (337.5 - 0.5) / 67.62 = 4.983
  EXPECT_NEAR(r.p_value, 6.248e-7, 0.005e-7);
}

TEST(RankTest, EmptyIsNoEvidence) { EXPECT_DOUBLE_EQ(mann_whitney({}, {1, 2}).p_value, 1); }

TEST(RankTest, Quantile) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

}  // namespace
}  // namespace chokepoint::analyses
