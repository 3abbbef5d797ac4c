#pragma once
// Fit quality (MSE and R^2; "score" is the attention score q^T G k elsewhere) of spec fixed-basis.md section 4:
//   MSE = (1/T) sum_d (pred(d) - y(d))^2,   R^2 = 1 - MSE / max(Var(y), 1e-12),
// Var the population variance of y over the same lags.

#include <Eigen/Dense>

namespace ropekit {

struct FitQuality {
  double mse = 0;
  double r2 = 0;
};

/// Variance floor of R^2: keeps a constant target from dividing by zero.
inline constexpr double kVarianceFloor = 1e-12;

/// MSE and R^2 of pred against y over all their entries (same length, >= 1).
FitQuality fit_quality(const Eigen::Ref<const Eigen::VectorXd>& pred, const Eigen::Ref<const Eigen::VectorXd>& y);

/// Population variance (two-pass, so a large mean does not cancel the spread).
double population_variance(const Eigen::Ref<const Eigen::VectorXd>& y);

}  // namespace ropekit
