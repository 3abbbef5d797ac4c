#pragma once
// Nonlinear fits with Ceres Solver (issue 8); fit/param_fit.cpp is the one source file that includes Ceres.
//
// 1. Tuning an encoding (`ropekit fit-params --encoding E --free NAMES`): minimise over the free parameters p
//    (tunable.hpp) the ridge objective of `ropekit fit`,
//        c(p) = min_w |X(p) w - y|^2 + lambda |w|^2          (fixed-basis.md section 4, lambda > 0),
//    by variable projection (Golub & Pereyra 1973): the weights are eliminated, w*(p) = A^+ b with
//    A = [X; sqrt(lambda) I], b = [y; 0], and Levenberg-Marquardt runs on the projected residual
//    r(p) = b - A w*(p) = (I - P_A) b with its exact Jacobian
//        dr/dp_k = -(I - P_A) dA_k w* - (A^+)^T dA_k^T r,
//    dA_k = [dX/dp_k; 0] from the templated features run on dual numbers. Why not joint (p, w): the projected
//    problem has only the nonlinear parameters, is better conditioned (the weights no longer couple with the
//    frequencies in the LM steps) and converges in fewer iterations from the same start (Golub & Pereyra 2003).
// 2. Fitting a spectral family to measured kernel values (`fit-params --spectrum 'matern:nu=?,l=?'
//    --kernel-data FILE`): nonlinear least squares sum_j (Phi(lag_j) - value_j)^2 with standard errors
//    sqrt(diag(s^2 (J^T J)^{-1})), s^2 = RSS / (n - p), J the Jacobian at the optimum.

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/encoding.hpp"
#include "ropekit/fit/tunable.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "targets/kernel_table.hpp"

namespace ropekit {

/// The feature matrix of the tunable form at p (rows = lags, cols = t.n_features()).
Eigen::MatrixXd tunable_features(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& p);

/// The projected residual r(p) (length lags + n_features) and, when asked, its exact Jacobian
/// (rows = residuals, cols = parameters). c(p) = |r|^2.
struct VarProEvaluation {
  Eigen::VectorXd residual;
  Eigen::MatrixXd jacobian;
  Eigen::VectorXd weights;  ///< w*(p)
};
VarProEvaluation varpro_evaluate(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                 double ridge, const Eigen::VectorXd& p, bool with_jacobian);

/// One free frequency-map parameter (factor, a spectrum's scale) with finite bounds: tune_encoding scans the bounded
/// interval on a grid of at most kScanPoints and refines the kScanRefined best grid minima as "scan" starts.
inline constexpr int kScanPoints = 4096, kScanRefined = 3;
inline bool tuning_scans(const TunableEncoding& t) {
  return t.start.size() == 1 && t.factor_at == 0 && std::isfinite(t.upper[0]) && t.lower[0] > 0;
}
/// The starts tune_encoding runs: `starts`, plus kScanRefined "scan" starts where it scans (the grid's best minima,
/// then its lowest other points when it has fewer minima), so that what a run announces is what it runs.
inline int tuning_start_count(const TunableEncoding& t, int starts) {
  return starts + (tuning_scans(t) ? kScanRefined : 0);
}

struct TuneOptions {
  double ridge = 1e-4;          ///< finite, > 0
  int starts = 3;               ///< 1: the untuned encoding only; then the periodogram start, then perturbations
                                ///< (one free base, factor or scale with finite bounds: plus 3 "scan" starts)
  std::uint64_t seed = 1;       ///< perturbations of the starts
  int max_iterations = 200;     ///< per start
  /// Called with a one-line account after each start ("start k of n (kind): cost a -> b in i iterations (...);
  /// t s elapsed"), and every progress_seconds while a scan or a start runs ("scan of factor: 640 of 4096 grid
  /// points (10 s elapsed)", "start 2 of 6 (perturbed): iteration 37, cost c (20 s elapsed)"); the command prints
  /// them on stderr for runs past 2 s.
  std::function<void(const std::string&)> progress;
  double progress_seconds = 10;
};

struct TuneStart {
  std::string kind;     ///< "untuned", "periodogram", "perturbed"
  double initial_cost = 0;  ///< Ceres' cost at the start, doubled: c(p_start)
  double final_cost = 0;    ///< c(p) at the returned p, recomputed (Ceres' own final cost can differ with bounds)
  int iterations = 0;
  std::string termination;  ///< Ceres' termination type: CONVERGENCE, NO_CONVERGENCE, ...
};

/// The optimum over the starts (the best final cost wins; the untuned start is always one of them, and LM never
/// accepts a step that raises the cost, so the tuned cost never exceeds the untuned one).
struct TuneResult {
  Eigen::VectorXd params;       ///< tuned p
  Encoding tuned;               ///< tuned_encoding(t, params)
  double untuned_cost = 0;      ///< c(p0)
  double tuned_cost = 0;        ///< c(p*)
  int best_start = 0;            ///< 0-based index into starts (the command line prints it 1-based everywhere)
  std::vector<TuneStart> starts;
  int scanned_points = 0;        ///< grid points of the one-dimensional global scan (0: no scan)
  std::vector<std::string> notes;  ///< one free parameter: starts that ended elsewhere, an unseparated best
  double seconds = 0;
};
/// @param lags, y the training lags and target values.
/// @throws InputError for ridge <= 0, starts < 1, mismatched or empty data.
TuneResult tune_encoding(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                         const TuneOptions& options);

/// A spectral family with some parameters marked free: `matern:nu=?,l=?` (start from a guess), `matern:nu=?2.5`
/// (start at 2.5); every other key as in parse_spectrum. Families: gaussian (sigma), cauchy (b), exponential (l),
/// sinc (W, 1-D), matern (nu, l); 1-D only.
struct SpectralFitParam {
  std::string name;
  double start = 0, estimate = 0, std_error = 0;  ///< std_error +inf where the data do not resolve the parameter
  std::string note;  ///< "at its upper bound 1e+06", "within 2 standard errors of its lower bound ...", or ""
};
struct SpectralFitResult {
  Spectrum fitted;
  std::vector<SpectralFitParam> params;
  int rows = 0;
  double rss = 0;           ///< sum of squared residuals at the optimum
  double rms = 0;           ///< sqrt(rss / rows)
  double initial_cost = 0;  ///< Ceres' cost 0.5 rss at the start and the end
  double final_cost = 0;
  int iterations = 0;
  std::string termination;
  double seconds = 0;
  std::string derivatives;  ///< "analytic" or "Ridders-extrapolated differences" (Matern)
};
/// @throws InputError naming `where` for an unknown family, no free parameter, a bad start, fewer rows than free
/// parameters + 1 (standard errors need n > p), a table whose lags are not 1-D kernel lags, or a fit estimated
/// beyond the run-time budget (budget.hpp); `announce` (if set) is told what runs and its estimated seconds (the
/// bound at max_iterations) before a run whose first 25 iterations are estimated over kNoticeSeconds.
SpectralFitResult fit_spectrum(std::string_view spelling, const KernelTable& data, std::string_view where,
                               int max_iterations = 200,
                               const std::function<void(const std::string&, double)>& announce = {});

}  // namespace ropekit
