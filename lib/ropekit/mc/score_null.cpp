#include "ropekit/mc/score_null.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>

namespace ropekit {

namespace {
// kappa_r of q_S^T G_S k_S for one block G_S: with B = Sigma^(1/2) M Sigma^(1/2) (symmetric, 2m x 2m),
// tr((M Sigma)^r) = tr(B^r), read off B, B^2 and B^3 as Frobenius products (tr B^4 = ||B^2||^2, ...).
void add_block_cumulants(const Eigen::MatrixXd& G, double rho, std::array<double, 7>& kappa) {
  const Eigen::Index m = G.rows();
  // Sigma^(1/2) = [[a I, b I], [b I, a I]], a = (sqrt(1 + rho) + sqrt(1 - rho)) / 2, b = (sqrt(1 + rho) - sqrt(1 - rho)) / 2.
  const double sp = std::sqrt(1 + rho), sm = std::sqrt(std::max(0.0, 1 - rho));
  const double a = (sp + sm) / 2, b = (sp - sm) / 2;
  // B = (1/2) [[a b (G + G^T), a^2 G + b^2 G^T], [a^2 G^T + b^2 G, a b (G + G^T)]].
  Eigen::MatrixXd B(2 * m, 2 * m);
  const Eigen::MatrixXd Gt = G.transpose();
  B.topLeftCorner(m, m) = 0.5 * (a * b * (G + Gt));
  B.topRightCorner(m, m) = 0.5 * (a * a * G + b * b * Gt);
  B.bottomLeftCorner(m, m) = 0.5 * (a * a * Gt + b * b * G);
  B.bottomRightCorner(m, m) = 0.5 * (a * b * (G + Gt));
  const Eigen::MatrixXd B2 = B * B;
  const Eigen::MatrixXd B3 = B2 * B;
  const double t[7] = {0, B.trace(), B.squaredNorm(), (B.cwiseProduct(B2)).sum(), B2.squaredNorm(),
                       (B2.cwiseProduct(B3)).sum(), B3.squaredNorm()};
  double factor = 1;  // 2^(r-1) (r-1)!
  for (int r = 1; r <= 6; ++r) {
    if (r > 1) factor *= 2.0 * (r - 1);
    kappa[static_cast<std::size_t>(r)] += factor * t[r];
  }
}

int find_root(std::vector<int>& parent, int i) {
  while (parent[static_cast<std::size_t>(i)] != i) {
    parent[static_cast<std::size_t>(i)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];
    i = parent[static_cast<std::size_t>(i)];
  }
  return i;
}
}  // namespace

std::array<double, 7> bilinear_score_cumulants(const Eigen::MatrixXd& G, double rho) {
  // Coordinates coupled by G (G_ij != 0 joins i and j) form independent parts of the score, whose cumulants add:
  // a rotary encoding costs O(n^2) here, not O(n^3).
  const auto n = static_cast<int>(G.rows());
  std::vector<int> parent(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) parent[static_cast<std::size_t>(i)] = i;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (G(i, j) != 0) {
        const int ri = find_root(parent, i), rj = find_root(parent, j);
        if (ri != rj) parent[static_cast<std::size_t>(std::max(ri, rj))] = std::min(ri, rj);
      }
  std::vector<std::vector<int>> parts(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) parts[static_cast<std::size_t>(find_root(parent, i))].push_back(i);
  std::array<double, 7> kappa{};
  for (const auto& idx : parts) {
    if (idx.empty()) continue;
    const auto m = static_cast<Eigen::Index>(idx.size());
    Eigen::MatrixXd Gs(m, m);
    for (Eigen::Index c = 0; c < m; ++c)
      for (Eigen::Index r = 0; r < m; ++r) Gs(r, c) = G(idx[static_cast<std::size_t>(r)], idx[static_cast<std::size_t>(c)]);
    add_block_cumulants(Gs, rho, kappa);
  }
  return kappa;
}

StatisticMoments sample_mean_moments(const std::array<double, 7>& k, double N) {
  return {k[1], k[2] / N, k[3] / (N * N)};
}

StatisticMoments sample_variance_moments(const std::array<double, 7>& k, double N) {
  const double m1 = N - 1;
  return {k[2], k[4] / N + 2 * k[2] * k[2] / m1,
          k[6] / (N * N) + 12 * k[4] * k[2] / (N * m1) + 4 * (N - 2) * k[3] * k[3] / (N * m1 * m1) +
              8 * k[2] * k[2] * k[2] / (m1 * m1)};
}

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// Tail probabilities below the smallest double give infinite normal scores instead of exceptions.
using Quiet = boost::math::policies::policy<boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                            boost::math::policies::underflow_error<boost::math::policies::ignore_error>>;

// Phi^-1 of a lower-tail probability p, and minus Phi^-1 of an upper-tail one, without forming 1 - p.
double z_of_lower(double p) { return p <= 0 ? -kInf : -std::sqrt(2.0) * boost::math::erfc_inv(2 * p, Quiet()); }
double z_of_upper(double q) { return q <= 0 ? kInf : std::sqrt(2.0) * boost::math::erfc_inv(2 * q, Quiet()); }
}  // namespace

double skewness(const StatisticMoments& m) {
  return m.variance > 0 ? m.third / (m.variance * std::sqrt(m.variance)) : 0.0;
}

double variance_skew_term(const std::array<double, 7>& kappa, double N, double z) {
  return skewness(sample_variance_moments(kappa, N)) * (z * z - 1) / 6;
}

std::int64_t min_calibrated_trials(const std::array<double, 7>& kappa, double z, std::int64_t cap) {
  auto ok = [&](std::int64_t N) {
    return variance_skew_term(kappa, static_cast<double>(N), z) <= kMaxSkewTerm;
  };
  if (!ok(cap)) return cap;
  std::int64_t lo = 3, hi = cap;  // the skewness falls as N grows (as N^-1/2 for large N)
  if (ok(lo)) return lo;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? hi : lo) = mid;
  }
  return hi;
}

double pearson3_z(double x, const StatisticMoments& m) {
  const double sd = std::sqrt(std::max(0.0, m.variance));
  const double d = x - m.mean;
  if (!(sd > 0)) return d == 0 ? 0.0 : std::copysign(kInf, d);
  const double skew = m.third / (sd * sd * sd);
  if (!(std::abs(skew) >= 1e-6)) return d / sd;
  if (skew < 0) return -pearson3_z(-x, {-m.mean, m.variance, -m.third});
  // X = a + theta Y, Y ~ Gamma(shape k), k = 4 / skew^2, theta = sd skew / 2, a = mean - 2 sd / skew.
  const double k = 4 / (skew * skew), theta = sd * skew / 2;
  const double y = (d + 2 * sd / skew) / theta;
  if (!(y > 0)) return -kInf;
  if (y < k) return z_of_lower(boost::math::gamma_p(k, y, Quiet()));  // below the mode's side: the lower tail is accurate
  return z_of_upper(boost::math::gamma_q(k, y, Quiet()));
}

}  // namespace ropekit
