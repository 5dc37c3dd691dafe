// Whether two sets of step times differ by more than their noise: the Mann-Whitney U
// test (Wilcoxon rank-sum), two-sided. Exact for small samples (a profiled trace holds a
// few steps), the normal approximation with the tie correction above kExactLimit samples
// (Mann & Whitney 1947; the tie correction as in scipy.stats.mannwhitneyu).
#pragma once

#include <cstddef>
#include <vector>

namespace chokepoint::analyses {

struct RankTest {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counting one half
  double p_value = 1;  // two-sided; 1 when either sample is empty
  bool exact = false;  // from the exact distribution of U (ties ignored), not the normal one
};

// Both samples together up to this many: the exact distribution.
inline constexpr size_t kExactLimit = 40;

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

// The q-quantile (0..1) of `v` by linear interpolation between closest ranks; 0 for none.
double quantile(std::vector<double> v, double q);

}  // namespace chokepoint::analyses
