#pragma once
// Ridge least squares of a fixed basis against one or more targets (spec fixed-basis.md section 4):
//   w = argmin |X w - y|^2 + lambda |w|^2 = (X^T X + lambda I)^{-1} X^T y,
// every column penalised (the constant included), no centring or scaling.
// Solved in float64 by QR, never by forming X^T X: X = Q R, then the small augmented system
// [R; sqrt(lambda) I] w = [Q^T y; 0] by a complete orthogonal decomposition. The error is governed by
// cond([X; sqrt(lambda) I]) = sqrt(cond(X^T X + lambda I)), so the fit stays accurate at cond 1e9 and beyond.

#include <Eigen/Dense>

namespace ropekit {

struct RidgeOptions {
  double lambda = 1e-4;  ///< ridge, finite, >= 0 (0 gives the minimum-norm least-squares solution)
  /// Pivots of the rank-revealing QR below rank_tolerance * the largest count as zero; the default
  /// max(rows, cols) * machine epsilon is LAPACK's convention for numerical rank.
  double rank_tolerance = -1;  ///< < 0: the default
};

struct RidgeFit {
  Eigen::MatrixXd weights;  ///< rows = X.cols(), cols = Y.cols(): one weight vector per target
  double cond = 0;          ///< 2-norm condition number of X^T X + lambda I (inf if singular)
  int rank = 0;             ///< numerical rank of X, without the ridge (column-pivoted QR)
};

/// Fits every column of Y with one factorization of X.
/// @param X rows = samples, cols = features; finite.  @param Y rows = X.rows(), cols = targets; finite.
/// @throws InputError on a NaN/inf entry, mismatched shapes, an empty X, or lambda < 0.
RidgeFit fit_ridge(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y, const RidgeOptions& options = {});

}  // namespace ropekit
