#include "ropekit/fit/linear_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/finite.hpp"

namespace ropekit {

namespace {
// Householder QR in place (R and the reflectors packed in `a`, as Eigen::HouseholderQR) with a blocked
// panel of 8 columns instead of Eigen's 48: the fixed-basis designs are tall and narrow (1024 x 30..140),
// where a narrower panel spends less in the unblocked panel factorisation (measured by ropekit_bench
// "QR panel width", AMD EPYC AVX-512: 1024 x 133 in 1.25 ms at 8, 1.35 at 16, 1.68 at 48; 4 and 6 are slower
// again). Same reflectors, same rounding class. The panel loop is Eigen's householder_qr_inplace_blocked::run, step
// for step (the same bits), with a look at the cancel flag per panel: a 2^20-row design took 30 s without one.
void householder_r_inplace(Eigen::MatrixXd& a) {
  const Eigen::Index rows = a.rows(), cols = a.cols(), size = std::min(rows, cols);
  Eigen::VectorXd h(size);
  Eigen::VectorXd temp(cols);
  const Eigen::Index block = std::min<Eigen::Index>(8, size);
  for (Eigen::Index k = 0; k < size; k += block) {
    check_cancelled();
    const Eigen::Index bs = std::min(size - k, block), trailing = cols - k - bs;
    auto panel = a.block(k, k, rows - k, bs);
    auto coeffs = h.segment(k, bs);
    Eigen::internal::householder_qr_inplace_unblocked(panel, coeffs, temp.data());
    if (trailing) {
      auto rest = a.block(k, k + bs, rows - k, trailing);
      Eigen::internal::apply_block_householder_on_the_left(rest, panel, coeffs, false);
    }
  }
}

// Householder QR of the (2p x p) matrix [R; s I], R upper triangular, skipping its known zeros, and the same
// reflections applied to [b; 0] (p x k on top, zeros below). At step j only row j of R and ridge rows 0..j
// are nonzero in column j (ridge row j still holds s alone, rows < j hold earlier fill-in), so the reflector
// has j + 2 entries: 2p^3/3 flops instead of the dense 10p^3/3 (p = 97: 0.65 -> ~0.1 ms). Same reflections
// as a dense Householder QR of the stacked matrix, so the same backward stability.
// On return R holds R2 (upper triangular, [R; s I] = Q2 [R2; 0]) and b the top p rows of Q2^T [b; 0].
void ridge_qr_inplace(Eigen::MatrixXd& R, Eigen::MatrixXd& b, double s) {
  const Eigen::Index p = R.rows(), k = b.cols();
  Eigen::MatrixXd ridge = Eigen::MatrixXd::Zero(p, p);  // ridge rows (row i starts as s e_i)
  Eigen::MatrixXd z = Eigen::MatrixXd::Zero(p, k);      // the ridge rows of the right-hand side
  ridge.diagonal().setConstant(s);
  Eigen::VectorXd v(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    const Eigen::Index m = j + 1;  // ridge rows 0..j
    // x = [R(j,j); ridge(0..j, j)] -> [beta; 0] (Eigen's makeHouseholder convention: v = [1; tail]).
    const double x0 = R(j, j);
    const double tail2 = ridge.col(j).head(m).squaredNorm();
    if (tail2 == 0) continue;  // nothing to annihilate (s = 0 is handled by the caller)
    const double beta = x0 >= 0 ? -std::sqrt(x0 * x0 + tail2) : std::sqrt(x0 * x0 + tail2);
    const double tau = (beta - x0) / beta;
    v.head(m) = ridge.col(j).head(m) / (x0 - beta);
    R(j, j) = beta;
    ridge.col(j).head(m).setZero();
    for (Eigen::Index c = j + 1; c < p; ++c) {
      const double w = tau * (R(j, c) + v.head(m).dot(ridge.col(c).head(m)));
      R(j, c) -= w;
      ridge.col(c).head(m) -= w * v.head(m);
    }
    for (Eigen::Index c = 0; c < k; ++c) {
      const double w = tau * (b(j, c) + v.head(m).dot(z.col(c).head(m)));
      b(j, c) -= w;
      z.col(c).head(m) -= w * v.head(m);
    }
  }
}
}  // namespace

RidgeFit fit_ridge(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y, const RidgeOptions& options) {
  constexpr const char* kWhere = "ridge fit";
  check_nonnegative(kWhere, "lambda", options.lambda);
  if (X.rows() == 0 || X.cols() == 0) throw_bad_value(kWhere, "X", "empty", "at least one row and one column");
  if (Y.rows() != X.rows())
    throw_bad_value(kWhere, "Y.rows()", std::to_string(Y.rows()), fmt::format("X.rows() = {}", X.rows()));
  if (!all_finite(X)) throw_bad_value(kWhere, "X", "non-finite entries", "finite");
  if (!all_finite(Y)) throw_bad_value(kWhere, "Y", "non-finite entries", "finite");

  const Eigen::Index n = X.rows(), p = X.cols(), k = Y.cols();
  const Eigen::Index r = std::min(n, p);

  // Stage 1: QR of [X | Y]. Its leading p x p block is R of X = Q R, and the first p rows of its last
  // k columns are Q^T Y: one factorization yields both (zero-padded when n < p).
  Eigen::MatrixXd XY(n, p + k);
  XY << X, Y;
  householder_r_inplace(XY);
  const Eigen::MatrixXd& packed = XY;
  Eigen::MatrixXd R = Eigen::MatrixXd::Zero(p, p);
  R.topRows(r) = packed.topLeftCorner(r, p).triangularView<Eigen::Upper>();
  Eigen::MatrixXd QtY = Eigen::MatrixXd::Zero(p, k);  // first p rows of Q^T Y
  QtY.topRows(r) = packed.block(0, p, r, k);

  RidgeFit fit;
  const double lam = options.lambda;
  const double tol_factor = options.rank_tolerance >= 0
                                ? options.rank_tolerance
                                : static_cast<double>(std::max(n, p)) * std::numeric_limits<double>::epsilon();
  // Rank of X = rank of R, by column-pivoted QR (rank-revealing, as LAPACK's xGELSY).
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> rrqr(R);
  rrqr.setThreshold(tol_factor);
  fit.rank = static_cast<int>(rrqr.rank());

  // Stage 2: [R; sqrt(lambda) I] w = [Q^T Y; 0]. Full column rank when lambda > 0 (QR skipping the known
  // zeros); when lambda = 0 a complete orthogonal decomposition gives the minimum-norm least-squares solution.
  // cond(X^T X + lambda I) = s_max^2 / s_min^2 over the singular values of [X; sqrt(lambda) I] = Q2 [R2; 0]
  // (R when lambda = 0). s_max^2 is the largest eigenvalue of R2^T R2 (relative error ~ eps); 1 / s_min^2 the
  // largest of R2^-1 R2^-T (R2^-1 by triangular solves, relative error ~ eps * sqrt(cond)). The smallest eigenvalue
  // of R2^T R2 would carry eps * cond (2e-9 relative at ridge 1e-4, 5e-7 at ridge 0: issue 20); a full SVD of R2
  // costs 4-6x the two symmetric eigenvalue problems at these sizes.
  Eigen::MatrixXd Rc;
  if (lam > 0) {
    Eigen::MatrixXd R2 = R;
    ridge_qr_inplace(R2, QtY, std::sqrt(lam));
    fit.weights = R2.triangularView<Eigen::Upper>().solve(QtY);
    Rc = R2.triangularView<Eigen::Upper>();
  } else {
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(R.rows(), R.cols());
    cod.setThreshold(tol_factor);  // before compute(): the rank decided there shapes the solution
    cod.compute(R);
    fit.weights = cod.solve(QtY);
    Rc = R;
  }
  fit.cond = std::numeric_limits<double>::infinity();
  if ((Rc.diagonal().array() != 0).all()) {
    const Eigen::MatrixXd G = Rc.transpose() * Rc;
    const Eigen::MatrixXd Rinv = Rc.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(p, p));
    Eigen::MatrixXd W;
    W.noalias() = Rinv * Rinv.transpose();
    if (all_finite(W)) {
      const double smax2 = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
      const double inv_smin2 = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(W, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
      fit.cond = smax2 * inv_smin2;
    }
  }
  return fit;
}

}  // namespace ropekit
