#pragma once
// What a spectral fit (fit-params --spectrum, param_fit.hpp fit_spectrum) reports beside its estimates: standard
// errors that stay honest when a parameter barely moves the residuals, a note for a parameter at or beside a bound
// of its range, and the run-time estimate that sizes and announces the fit (issue 20 item 11). Ceres-free.

#include <string>

#include <Eigen/Dense>

namespace ropekit {

/// Standard errors sqrt(diag(s^2 (J^T J)^-1)), s^2 = rss / (n - p), of a least-squares fit with Jacobian J (n x p,
/// n > p) at its optimum. Computed on unit-norm columns, so a parameter the residuals hardly depend on gets its
/// large standard error (the pseudo-inverse of J^T J gave 0: nu = 998055 with std_error 2.3e-19); +inf for a zero
/// column, or for parameters in a direction J does not resolve (scaled singular value below 1e-8).
Eigen::VectorXd least_squares_std_errors(const Eigen::MatrixXd& J, double rss);

/// "at its upper bound 1000000" (estimate == hi), "within 2 standard errors of its upper bound 1000000" (the data
/// do not separate it from the bound), the same for the lower bound, "unresolved by the data (...)" when 2 standard
/// errors reach both bounds, else "".
std::string bound_note(double estimate, double std_error, double lo, double hi);

/// Estimated seconds of a spectral fit: (max_iterations + 1) iterations, each evaluating the residuals for the step
/// and its check and the Jacobian (analytic: once more; else Ridders' differences, up to 10 extrapolations of a
/// central difference, 20 evaluations, per free parameter); `rows` Phi values of `phi_work` elements each
/// (spectrum.hpp kernel_values_work) per evaluation, at budget.hpp's kElementsPerSecond.
double spectral_fit_seconds(double rows, int free, bool analytic, int max_iterations, double phi_work);

}  // namespace ropekit
