#pragma once
// The null distribution of verify content's two statistics, from the score's exact cumulants.
// s = q^T G k with (q, k) ~ N(0, Sigma), Sigma = [[I, rho I], [rho I, I]], is a Gaussian quadratic form
// s = z^T M z, M = (1/2) [[0, G], [G^T, 0]], whose cumulants are kappa_r = 2^(r-1) (r-1)! tr((M Sigma)^r)
// (Mathai & Provost 1992, Theorem 3.2b.2). The sample mean and the unbiased sample variance of N draws then
// have known mean, variance and third cumulant (the k-statistics' sampling cumulants, Kendall & Stuart,
// Advanced Theory of Statistics vol. 1, sec. 12.15), and their distribution is approximated by the Pearson
// type III (shifted gamma) law with those three moments. The score is heavy-tailed (G not orthogonal, or small
// n), so the sample variance is right-skewed at small N: a z with the standard error estimated from the sample
// fourth moment is left-skewed (its error and its value move together) and raised false alarms at N = 300.

#include <array>
#include <cstdint>

#include <Eigen/Dense>

namespace ropekit {

/// kappa_1..kappa_6 of s = q^T G k (index r holds kappa_r; index 0 unused). G square, rho in [-1, 1].
std::array<double, 7> bilinear_score_cumulants(const Eigen::MatrixXd& G, double rho);

/// Mean, variance and third cumulant of a statistic.
struct StatisticMoments {
  double mean = 0, variance = 0, third = 0;
};
/// Of the mean of N iid draws with cumulants kappa: kappa_1, kappa_2 / N, kappa_3 / N^2.
StatisticMoments sample_mean_moments(const std::array<double, 7>& kappa, double N);
/// Of the unbiased sample variance k_2 of N >= 3 iid draws: kappa_2, kappa_4 / N + 2 kappa_2^2 / (N - 1), and
/// kappa_6 / N^2 + 12 kappa_4 kappa_2 / (N (N-1)) + 4 (N-2) kappa_3^2 / (N (N-1)^2) + 8 kappa_2^3 / (N-1)^2.
StatisticMoments sample_variance_moments(const std::array<double, 7>& kappa, double N);

/// Skewness of the statistic's law (0 where its variance is 0).
double skewness(const StatisticMoments& m);

/// The largest Cornish-Fisher skew term skew (z^2 - 1) / 6 at the critical z for which the Pearson III normal
/// score keeps the false-alarm rate: measured by simulation (1e4..2e5 replications per cell) over sample
/// variances of heavy-tailed scores at N = 100..3000 and per-tail rates 2.5e-4..1.25e-2, the rate stays within
/// 1.3x of nominal (sampling error included) up to 0.47 and exceeds it by 1.4x to 24x from 0.7 on.
constexpr double kMaxSkewTerm = 0.45;

/// The Cornish-Fisher skew term skewness (z^2 - 1) / 6 of the sample variance of N draws at the critical z.
double variance_skew_term(const std::array<double, 7>& kappa, double N, double z);

/// The smallest N (>= 3) at which sample_variance_moments(kappa, N) has skew (z^2 - 1) / 6 <= kMaxSkewTerm;
/// `cap` if even N = cap does not reach it.
std::int64_t min_calibrated_trials(const std::array<double, 7>& kappa, double z, std::int64_t cap);

/// The normal score Phi^-1(F(x)) of x under the Pearson type III law with the statistic's three moments (the
/// normal law when its skewness is below 1e-6); -inf / +inf outside the law's support, 0 at the mean of a law
/// with zero variance when x equals it.
double pearson3_z(double x, const StatisticMoments& m);

}  // namespace ropekit
