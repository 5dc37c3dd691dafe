// Whether the runs of two sides differ by more than the runs of one side differ among
// themselves: Welch's t-test (unequal variances, Welch-Satterthwaite degrees of freedom),
// two-sided, on the logarithms of the runs' step times, so a change is judged as a ratio
// (what `diff` reports) and one slow run weighs as much as one fast one. Runs, not steps,
// are the unit: the steps of one process share its placement, clocks and allocator state,
// so they vary less than processes do (docs/VALIDATION.md "diff: A/A").
#pragma once

#include <vector>

namespace chokepoint::analyses {

struct WelchTest {
  double t = 0;          // (mean log a - mean log b) / its standard error
  double df = 0;         // Welch-Satterthwaite degrees of freedom
  double p_value = 1;    // two-sided; 1 when a side has fewer than 2 runs or a value <= 0
  double log_ratio = 0;  // mean log a - mean log b: exp() of it is the ratio of geometric means
};

// a, b: positive values (ms), each side at least 2.
WelchTest welch_log_t(const std::vector<double>& a, const std::vector<double>& b);

// P(|T| >= |t|) for Student's t with df degrees of freedom (df > 0).
double student_t_two_sided(double t, double df);

// The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0.
double incomplete_beta(double x, double a, double b);

}  // namespace chokepoint::analyses
