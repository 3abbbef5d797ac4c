#include "ropekit/fit/spectral_fit_stats.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

Eigen::VectorXd least_squares_std_errors(const Eigen::MatrixXd& J, double rss) {
  const Eigen::Index n = J.rows(), p = J.cols();
  const double inf = std::numeric_limits<double>::infinity();
  const double s2 = rss / static_cast<double>(n - p);
  const Eigen::VectorXd norms = J.colwise().norm().transpose();
  Eigen::VectorXd se = Eigen::VectorXd::Constant(p, inf);
  Eigen::MatrixXd Js = J;
  for (Eigen::Index i = 0; i < p; ++i)
    if (norms[i] > 0) Js.col(i) /= norms[i];
  // (Js^T Js)^-1 = V diag(1/sigma^2) V^T over the resolved directions; a parameter with weight in an unresolved one
  // (or a zero column) keeps +inf.
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(Js, Eigen::ComputeThinV);
  const Eigen::VectorXd sigma = svd.singularValues();
  const Eigen::MatrixXd& V = svd.matrixV();
  constexpr double kResolved = 1e-8;  // J^T J's condition 1e16: beyond it the inverse is rounding
  Eigen::VectorXd var = Eigen::VectorXd::Zero(p);
  std::vector<bool> unresolved(static_cast<std::size_t>(p), false);
  for (Eigen::Index k = 0; k < p; ++k) {
    if (sigma[k] > kResolved) {
      var += V.col(k).cwiseAbs2() / (sigma[k] * sigma[k]);
    } else {
      for (Eigen::Index i = 0; i < p; ++i)
        if (std::abs(V(i, k)) > 1e-6) unresolved[static_cast<std::size_t>(i)] = true;
    }
  }
  for (Eigen::Index i = 0; i < p; ++i)
    if (norms[i] > 0 && !unresolved[static_cast<std::size_t>(i)]) se[i] = std::sqrt(s2 * var[i]) / norms[i];
  return se;
}

std::string bound_note(double estimate, double std_error, double lo, double hi) {
  if (estimate <= lo) return fmt::format("at its lower bound {}", format_number(lo));
  if (estimate >= hi) return fmt::format("at its upper bound {}", format_number(hi));
  const bool near_lo = !(estimate - 2 * std_error > lo), near_hi = !(estimate + 2 * std_error < hi);
  if (near_lo && near_hi)
    return fmt::format("unresolved by the data (2 standard errors span its range [{}, {}])", format_number(lo),
                       format_number(hi));
  if (near_lo) return fmt::format("within 2 standard errors of its lower bound {}", format_number(lo));
  if (near_hi) return fmt::format("within 2 standard errors of its upper bound {}", format_number(hi));
  return "";
}

double spectral_fit_seconds(double rows, int free, bool analytic, int max_iterations, double phi_work) {
  const double evaluations = 2 + (analytic ? 1.0 : 20.0 * free);
  return (max_iterations + 1.0) * evaluations * rows * phi_work / kElementsPerSecond;
}

}  // namespace ropekit
