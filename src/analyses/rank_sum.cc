#include "analyses/rank_sum.h"

#include <algorithm>
#include <cmath>

namespace chokepoint::analyses {
namespace {

// U of `a` against `b`: pairs with a > b, plus one half per tie.
double u_statistic(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a) {
    for (double y : b) u += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  }
  return u;
}

// P(U <= u) under the null hypothesis for samples of n and m, by counting the
// arrangements: count[n][m][k] = count[n-1][m][k-m] + count[n][m-1][k] (the largest value
// is from the first sample, which then beats all m others, or from the second).
double exact_cdf(size_t n, size_t m, double u) {
  const size_t max_u = n * m;
  // table[i][j] is the distribution over k for samples of i and j (i <= n, j <= m).
  std::vector<std::vector<std::vector<double>>> table(n + 1, std::vector<std::vector<double>>(m + 1));
  for (size_t i = 0; i <= n; ++i) {
    for (size_t j = 0; j <= m; ++j) {
      std::vector<double>& t = table[i][j];
      t.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        t[0] = 1;
        continue;
      }
      const std::vector<double>& first = table[i - 1][j];
      const std::vector<double>& second = table[i][j - 1];
      for (size_t k = 0; k <= i * j; ++k) {
        if (k >= j && k - j < first.size()) t[k] += first[k - j];
        if (k < second.size()) t[k] += second[k];
      }
    }
  }
  const std::vector<double>& dist = table[n][m];
  double total = 0, below = 0;
  for (size_t k = 0; k <= max_u; ++k) {
    total += dist[k];
    if (static_cast<double>(k) <= u + 1e-9) below += dist[k];
  }
  return below / total;
}

// The normal approximation with the tie correction and a continuity correction.
double normal_p(const std::vector<double>& a, const std::vector<double>& b, double u) {
  const double n = static_cast<double>(a.size()), m = static_cast<double>(b.size());
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double total = n + m;
  const double var = n * m / 12.0 * ((total + 1) - ties / (total * (total - 1)));
  if (var <= 0) return 1;
  const double z = (std::abs(u - n * m / 2.0) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(std::max(0.0, z) / std::sqrt(2.0)));
}

}  // namespace

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  RankTest r;
  if (a.empty() || b.empty()) return r;
  r.u = u_statistic(a, b);
  if (a.size() + b.size() <= kExactLimit) {
    const double mean = static_cast<double>(a.size() * b.size()) / 2.0;
    // Two-sided: twice the tail on the side of U (the distribution is symmetric).
    const double lower = r.u <= mean ? r.u : static_cast<double>(a.size() * b.size()) - r.u;
    r.p_value = std::min(1.0, 2.0 * exact_cdf(a.size(), b.size(), lower));
    r.exact = true;
  } else {
    r.p_value = normal_p(a, b, r.u);
  }
  return r;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace chokepoint::analyses
