#pragma once
// Monte Carlo check of an encoding's content moments (spec encodings.md section 1): for content
// q, k ~ N(0, I_n), jointly Gaussian with E[q k^T] = rho I, the score s = q^T G(Dp) k has
//   mean      E[s]   = rho tr G(Dp),
//   variance  Var[s] = ||G(Dp)||_F^2 + rho^2 tr(G(Dp)^2)   (Isserlis),
// which kernel_rows gives in closed form per block. N trials draw z1, z2 ~ N(0, I_n) and set q = z1,
// k = rho z1 + sqrt(1 - rho^2) z2. The sample mean and the sample variance at each lag are each given the
// normal score z of their null law (score_null.hpp: the score's exact cumulants at the assumed rho, three
// moments, Pearson type III), tested against the two-sided normal bound at false-alarm rate alpha over all
// 2 L checks (Bonferroni: alpha / (2 L) per check). The null law's skew keeps the level at small N, where a
// z with the standard error estimated from the sample's fourth moment raised twice the false alarms.
// Trials run in chunks of kTrialsPerChunk, chunk c draws from Rng(seed, content stream, c) and the chunks'
// moments merge in chunk order: the numbers depend on the seed, never on the threads, and the first N
// trials do not depend on how many follow.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/mc/monte_carlo.hpp"

namespace ropekit {

struct ContentVerifyOptions {
  Encoding encoding;                  ///< a relative encoding (is_relative)
  Lags lags;                          ///< rows = lags, cols = lag_dims(encoding)
  double rho = 0.5;                   ///< the correlation sampled, E[q k^T] = rho I, in [-1, 1]
  std::optional<double> assumed_rho;  ///< the correlation the expected values use (default: rho); a wrong
                                      ///< one must fail, which shows the check has power
  McOptions mc;                       ///< trials, seed, threads, progress (mc.sampling is not used)
  double alpha = 1e-6;                ///< false-alarm rate of the whole verdict, in (0, 1)
  /// Lags the verdict's checks are counted over (Bonferroni over 2 checks per lag); 0: lags.rows(). A shard of a
  /// run (`--shard`) checks some of its lags at the whole run's per-check rate.
  std::size_t bonferroni_lags = 0;
};

struct ContentLagCheck {
  std::vector<double> lag;     ///< Dp, lag_dims components
  double mean_expected = 0;    ///< assumed_rho tr G
  double mean_observed = 0;    ///< sample mean of s
  double stderr_mean = 0;      ///< sqrt(kappa_2 / N + rounding^2): the null law's standard deviation
  double z_mean = 0;           ///< normal score of mean_observed under the null law (score_null.hpp)
  double var_expected = 0;     ///< ||G||_F^2 + assumed_rho^2 tr G^2
  double var_observed = 0;     ///< unbiased sample variance s^2
  double var_stderr = 0;       ///< sqrt(kappa_4 / N + 2 kappa_2^2 / (N - 1) + rounding^2): the null law's sd
  double z_var = 0;            ///< normal score of var_observed under the null law (score_null.hpp)
  bool mean_pass = true;       ///< |z_mean| <= z_critical
  bool var_pass = true;        ///< |z_var| <= z_critical
  bool pass() const { return mean_pass && var_pass; }
};

struct ContentVerifyReport {
  std::vector<ContentLagCheck> lags;
  int dim = 0;                          ///< n = operator_dim
  std::int64_t trials = 0;
  double rho = 0, assumed_rho = 0;
  double alpha = 0, alpha_per_check = 0;  ///< alpha / (2 L)
  double z_critical = 0;                  ///< two-sided normal quantile at alpha_per_check
  bool pass = true;                       ///< every lag's mean and variance check
  double max_abs_z_mean = 0, max_abs_z_var = 0;
  std::string encoding;                   ///< canonical spelling
};

/// Builds G(Dp) once per lag, runs N trials and checks mean and variance at every lag.
/// @throws InputError naming `where`'s spelling of the parameter (encoding, lags, rho, assume_rho, alpha,
/// trials) for an absolute encoding, a direct sum with k-D parts (no operator), lags of the wrong dimension
/// or non-finite, rho or assumed_rho outside [-1, 1], alpha outside (0, 1) or below min_alpha(2 L),
/// trials < 2, or a lag where ||G||_F > 1e60 (the scores' fourth-moment sums would overflow float64).
ContentVerifyReport verify_content(const ContentVerifyOptions& options,
                                   const Where& where = Where("ropekit verify content"));

/// True if verify_content can build the encoding's operator: a relative encoding with 1-D lags, nd, or
/// rf-rope (a direct sum with a k-D part, k > 1, has no operator yet). operator_dim is defined for these.
bool content_checkable(const Encoding& e);

/// The moments of s = q^T G_l k over N trials for each operator G_l (all n x n, finite), q, k drawn as
/// above from Rng(options.seed, content stream, chunk). @throws InputError for bad options or rho.
std::vector<Moments> content_score_moments(const std::vector<Eigen::MatrixXd>& operators, double rho,
                                           const McOptions& options);

/// Estimated memory and run time of verify_content (budget.hpp): the L operators (L n^2 doubles, each
/// built from n^2 closed-form entries, or with ~30 n^3 flops when `dense_exponential`: nd's matrix
/// exponential), per worker three n x 256 blocks of content, and per trial 2 n normal draws and
/// 2 n^2 flops per lag (G k by blocks of 256 trials).
Cost content_verify_cost(std::int64_t trials, int n, double lags, int threads, bool dense_exponential = false);

}  // namespace ropekit
