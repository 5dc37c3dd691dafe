#include "analyses/welch.h"

#include <gtest/gtest.h>

#include <cmath>

namespace chokepoint::analyses {
namespace {

// Reference values from the closed forms: I_x(1, 1) = x; I_x(a, 1) = x^a; t with 1 df is
// Cauchy (P(|T| >= 1) = 0.5); with 2 df P(|T| >= t) = 1 - t / sqrt(2 + t^2).
TEST(Welch, IncompleteBetaClosedForms) {
  EXPECT_NEAR(incomplete_beta(0.3, 1, 1), 0.3, 1e-12);
  EXPECT_NEAR(incomplete_beta(0.3, 3, 1), 0.027, 1e-12);
  EXPECT_NEAR(incomplete_beta(0.8, 2, 3) + incomplete_beta(0.2, 3, 2), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(incomplete_beta(0, 2, 3), 0);
  EXPECT_DOUBLE_EQ(incomplete_beta(1, 2, 3), 1);
}

TEST(Welch, StudentTClosedForms) {
  EXPECT_NEAR(student_t_two_sided(1, 1), 0.5, 1e-12);
  EXPECT_NEAR(student_t_two_sided(3, 2), 1 - 3 / std::sqrt(11.0), 1e-12);
  EXPECT_NEAR(student_t_two_sided(0, 5), 1.0, 1e-12);
  // 97.5% point of t with 10 df is 2.228 (tables): two-sided p 0.05.
  EXPECT_NEAR(student_t_two_sided(2.228139, 10), 0.05, 1e-5);
}

// a = [10, 11, 10.5], b = [20, 21, 19.5]; by hand from the logs: t = -18.62, df = 3.797.
TEST(Welch, SeparatedRuns) {
  const WelchTest w = welch_log_t({10, 11, 10.5}, {20, 21, 19.5});
  EXPECT_NEAR(w.t, -18.6165, 1e-3);
  EXPECT_NEAR(w.df, 3.7973, 1e-3);
  EXPECT_LT(w.p_value, 1e-3);
  EXPECT_NEAR(std::exp(-w.log_ratio), 1.9212, 1e-4);  // the geometric means' ratio
}

TEST(Welch, OverlappingRunsAreNotSignificant) {
  const WelchTest w = welch_log_t({10, 13, 9}, {11, 12, 10});
  EXPECT_GT(w.p_value, 0.5);
}

TEST(Welch, TooFewRunsOrBadValues) {
  EXPECT_DOUBLE_EQ(welch_log_t({10}, {20, 21}).p_value, 1);
  EXPECT_DOUBLE_EQ(welch_log_t({10, 0}, {20, 21}).p_value, 1);
  EXPECT_DOUBLE_EQ(welch_log_t({10, 10}, {10, 10}).p_value, 1);
  EXPECT_DOUBLE_EQ(welch_log_t({10, 10}, {20, 20}).p_value, 0);
}

}  // namespace
}  // namespace chokepoint::analyses
