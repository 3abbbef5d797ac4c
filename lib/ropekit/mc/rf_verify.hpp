#pragma once
// The checks of spec rf-rope.md section 4 on Monte Carlo runs of the RF-RoPE estimator:
//  * Master Theorem (Thm 2): z = (mean - (q.k) Phi) / (s / sqrt(N)) against the two-sided normal bound;
//  * Proposition 4: z = (s^2 - Var(S)) / se(s^2), se from the sample fourth moment;
//  * convergence: relative RMS error against D, fitted log-log slope near -1/2;
//  * power: the same run drawing from a wrong density must fail;
//  * Theorem 6: Phi(Dp) <= Phi(0) = 1.
// Each check has false-alarm rate alpha over all its lags: Bonferroni, alpha / L per lag.
// Scores carry float64 rounding of about (D + 8) eps sum_i(|A_i| + |B_i|); the bounds add that
// allowance so that lags where the sampling spread vanishes (Dp = 0) are not false alarms.

#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/mc/monte_carlo.hpp"
#include "ropekit/spectral/rf_estimator.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

struct VerifyOptions {
  Spectrum spectrum;             ///< the kernel claimed: expected values use its Phi
  std::optional<Spectrum> draw;  ///< the density sampled (default: spectrum); a wrong one tests power
  Content content;               ///< D = content.blocks()
  Eigen::MatrixXd lags;          ///< rows = lags, cols = k
  McOptions mc;
  double alpha = 1e-6;           ///< false-alarm rate of each check over all lags, in (0, 1)
  /// Lags the false-alarm rate is split over (Bonferroni); 0: lags.rows(). A shard of a run (`--shard`) checks
  /// some of the run's lags at the whole run's per-lag rate, so that its rows equal the unsharded run's.
  std::size_t bonferroni_lags = 0;
};

struct LagCheck {
  std::vector<double> lag;    ///< Dp, k components
  double expected = 0;        ///< (q . k) Phi(Dp)
  double mean = 0;            ///< Monte Carlo mean of S
  double stderr_mean = 0;     ///< s / sqrt(N)
  double z = 0;               ///< (mean - expected) / sqrt(stderr^2 + rounding^2)
  double var_expected = 0;    ///< Var(S) by Prop 4 (NaN for stratified draws)
  double var_observed = 0;    ///< s^2
  double var_stderr = 0;      ///< standard error of s^2 (fourth moment)
  double z_var = 0;           ///< (s^2 - var_expected) / sqrt(var_stderr^2 + rounding^2)
  bool mean_pass = true;      ///< |z| <= z_critical
  bool var_pass = true;       ///< |z_var| <= z_critical (true when var_expected is NaN: no claim)
};

struct VerifyReport {
  std::vector<LagCheck> lags;
  int blocks = 0;
  std::int64_t trials = 0;
  double alpha = 0, alpha_per_lag = 0;  ///< alpha / L
  double z_critical = 0;                ///< two-sided normal quantile at alpha_per_lag
  bool mean_pass = true, var_pass = true;
  double max_abs_z = 0, max_abs_z_var = 0;
  std::string spectrum, draw;           ///< spellings
};

/// Runs N trials and checks Theorem 2 and Proposition 4 at every lag. @throws InputError for bad options
/// (alpha outside (0, 1), lag dimension, trials < 2, ...).
VerifyReport verify(const VerifyOptions& options);

/// Two-sided normal critical value for a check at false-alarm rate alpha split over `checks` (Bonferroni).
/// alpha / (2 checks) must be a normal float64 number (>= DBL_MIN): below it the quantile is not computed.
double bonferroni_z(double alpha, std::size_t checks);
/// The smallest alpha bonferroni_z accepts for `checks` lags: 2 checks DBL_MIN.
double min_alpha(std::size_t checks);

/// Relative RMS error of S against (q . k) Phi, over D.
struct ConvergenceOptions {
  Spectrum spectrum;                                     ///< the kernel claimed
  std::optional<Spectrum> draw;                          ///< the density sampled (default: spectrum)
  ContentKind content = ContentKind::correlated;         ///< comparable blocks, q . k ~ D (as after layernorm)
  Eigen::MatrixXd lags;                                  ///< rows = lags (at least one non-zero), cols = k
  std::vector<int> blocks{8, 16, 32, 64, 128, 256, 512, 1024};  ///< each >= 1
  McOptions mc;                                          ///< trials per D; the content comes from mc.seed
  double slope_tolerance = 0.1;                          ///< pass if |slope + 1/2| <= this
};
struct ConvergencePoint {
  int blocks = 0;
  double rel_rms = 0;           ///< sqrt(mean over lags and trials of (S - (q.k) Phi)^2) / |q . k|
  double rel_rms_expected = 0;  ///< the same from Prop 4: sqrt(mean over lags of Var(S)) / |q . k|
};
struct ConvergenceReport {
  std::vector<ConvergencePoint> points;
  double slope = 0;           ///< least-squares slope of log rel_rms on log D
  double slope_expected = 0;  ///< the same for rel_rms_expected (this content's exact Prop 4 curve)
  double tolerance = 0;
  bool pass = false;          ///< |slope + 1/2| <= tolerance
  std::string spectrum, draw;
};
/// The content has max(blocks) rows drawn once; D uses its first D blocks. @throws InputError.
ConvergenceReport convergence(const ConvergenceOptions& options);

/// Variance of S under i.i.d., antithetic and (k = 1) stratified draws, same seed and content.
struct SamplingRow {
  std::vector<double> lag;
  double var_iid_expected = 0, var_iid = 0;                ///< Prop 4; observed
  double var_antithetic_expected = 0, var_antithetic = 0;  ///< Prop 4 on antithetic pairs; observed
  double var_stratified = 0;                               ///< observed (NaN for k > 1)
  double mean_iid = 0, mean_antithetic = 0, mean_stratified = 0;  ///< all estimate (q . k) Phi
  double stderr_stratified = 0;
};
std::vector<SamplingRow> compare_sampling(const Spectrum& s, const Content& content, const Eigen::MatrixXd& lags,
                                          const McOptions& mc);

/// The wrong density of the power check: the family with its scale replaced by the reciprocal, the
/// mistake of the paper's Cauchy line (Laplace(0, b) for Laplace(0, 1/b)): gaussian sigma -> 1/sigma,
/// cauchy b -> 1/b, exponential l -> 1/l, sinc W_j -> 1/W_j, matern l -> 1/l; a mixture loses its means
/// (mu = 0); a frequency file has its frequencies doubled. Equal to s when the scale is 1: see differs().
Spectrum wrong_density(const Spectrum& s);
/// One line naming what wrong_density(s) draws, e.g. "Laplace(0, b = 4) (the erratum's e^{-|w|/b})".
std::string wrong_density_note(const Spectrum& s);
/// True if Phi differs between a and b at one of `lags` by more than 1e-12.
bool differs(const Spectrum& a, const Spectrum& b, const Eigen::MatrixXd& lags);

/// Theorem 6 on a grid: max of Phi over non-zero lags (linear 0.01..100 and geometric 1e-6..1e6 radii,
/// along the axes and along random directions for k > 1). Pass if max <= 1 = Phi(0).
struct PeakCheck {
  double phi0 = 1, max_phi = 0;
  std::vector<double> argmax;
  double max_phi_far = 0;           ///< max of Phi over |Dp| >= 1: side lobes, modulation
  std::vector<double> argmax_far;
  std::size_t lags_checked = 0;
  bool pass = false;
};
PeakCheck check_peak(const Spectrum& s, std::uint64_t seed = kDefaultSeed);


}  // namespace ropekit
