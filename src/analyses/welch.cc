#include "analyses/welch.h"

#include <cmath>
#include <limits>

namespace chokepoint::analyses {
namespace {

// The continued fraction of I_x(a, b) by the modified Lentz method (Numerical Recipes,
// betacf); converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < kEps) break;
  }
  return h;
}

void mean_var(const std::vector<double>& logs, double& mean, double& var) {
  mean = 0;
  for (double v : logs) mean += v;
  mean /= static_cast<double>(logs.size());
  var = 0;
  for (double v : logs) var += (v - mean) * (v - mean);
  var /= static_cast<double>(logs.size() - 1);
}

}  // namespace

double incomplete_beta(double x, double a, double b) {
  if (!(x > 0)) return 0;
  if (!(x < 1)) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(x, a, b) / a;
  return 1 - front * beta_fraction(1 - x, b, a) / b;
}

double student_t_two_sided(double t, double df) {
  if (!(df > 0) || std::isnan(t)) return 1;
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

WelchTest welch_log_t(const std::vector<double>& a, const std::vector<double>& b) {
  WelchTest w;
  if (a.size() < 2 || b.size() < 2) return w;
  std::vector<double> la, lb;
  for (double v : a) {
    if (!(v > 0) || !std::isfinite(v)) return w;
    la.push_back(std::log(v));
  }
  for (double v : b) {
    if (!(v > 0) || !std::isfinite(v)) return w;
    lb.push_back(std::log(v));
  }
  double ma = 0, va = 0, mb = 0, vb = 0;
  mean_var(la, ma, va);
  mean_var(lb, mb, vb);
  w.log_ratio = ma - mb;
  const double na = static_cast<double>(la.size()), nb = static_cast<double>(lb.size());
  const double sa = va / na, sb = vb / nb, se2 = sa + sb;
  if (!(se2 > 0)) {  // every run of each side the same: any difference is certain, none is none
    w.t = w.log_ratio == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), w.log_ratio);
    w.df = na + nb - 2;
    w.p_value = w.log_ratio == 0 ? 1 : 0;
    return w;
  }
  w.t = w.log_ratio / std::sqrt(se2);
  w.df = se2 * se2 / (sa * sa / (na - 1) + sb * sb / (nb - 1));
  w.p_value = student_t_two_sided(w.t, w.df);
  return w;
}

}  // namespace chokepoint::analyses
