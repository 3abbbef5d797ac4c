// The float64 ridge fit: normal equations, an independent extended-precision solve, exact fits of
// targets inside the span, rank and condition number against an SVD.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <random>

#include "ropekit/encodings/basis.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/fit/linear_fit.hpp"
#include "ropekit/fit/metrics.hpp"

using namespace ropekit;

namespace {

BasisParams paper_params() {
  BasisParams p;
  p.num_freqs = 16;
  p.head_dim = 64;
  p.train_context = 1024;
  return p;
}

Eigen::MatrixXd train_features(const char* method) {
  return features(parse_method(method), paper_params(), Eigen::VectorXd::LinSpaced(1024, 0, 1023));
}

Eigen::MatrixXd random_targets(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, 1);
  Eigen::MatrixXd Y(rows, cols);
  for (Eigen::Index i = 0; i < Y.size(); ++i) Y.data()[i] = n(rng);
  return Y;
}

// (X^T X + lambda I) w = X^T y solved in long double (64-bit mantissa, eps ~ 5e-20) by Cholesky:
// a second algorithm in a higher precision.
Eigen::MatrixXd normal_equations_long_double(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y, double lambda) {
  using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  const MatL Xl = X.cast<long double>(), Yl = Y.cast<long double>();
  MatL G = Xl.transpose() * Xl;
  G.diagonal().array() += static_cast<long double>(lambda);
  return G.llt().solve(Xl.transpose() * Yl).cast<double>();
}

}  // namespace

TEST_CASE("ridge weights satisfy the normal equations (X^T X + lambda I) w = X^T y") {
  for (std::string m : {"rope", "direct_sum", "jordan_rope", "jordan_raw_tau", "jordan_scaled_m4_c010"}) {
    CAPTURE(m);
    const Eigen::MatrixXd X = train_features(m.c_str());
    const Eigen::MatrixXd Y = random_targets(X.rows(), 3, 7);
    const RidgeFit fit = fit_ridge(X, Y, RidgeOptions{1e-4});
    Eigen::MatrixXd G = X.transpose() * X;
    G.diagonal().array() += 1e-4;
    const Eigen::MatrixXd residual = G * fit.weights - X.transpose() * Y;
    // A backward-stable solve leaves a residual of order eps * |G| * |w| (+ eps |X^T y|).
    const double scale = G.norm() * fit.weights.norm() + (X.transpose() * Y).norm();
    CHECK(residual.norm() <= 1e-13 * scale);
  }
}

TEST_CASE("QR weights agree with a long-double normal-equations solve at cond up to 1e9") {
  for (std::string m : {"rope", "direct_sum", "jordan_rope", "jordan_raw_tau", "jordan_m4", "jordan_scaled_m4_c010"}) {
    CAPTURE(m);
    const Eigen::MatrixXd X = train_features(m.c_str());
    const Eigen::MatrixXd Y = random_targets(X.rows(), 2, 11);
    const RidgeFit fit = fit_ridge(X, Y, RidgeOptions{1e-4});
    const Eigen::MatrixXd ref = normal_equations_long_double(X, Y, 1e-4);
    CAPTURE(fit.cond);
    // Forward error of a backward-stable least-squares solve: ~ cond(X^T X + lambda I) * eps in the
    // worst direction; with cond <= 1e9 that is <= 2e-7 relative. (The long-double reference is
    // ~2000x more accurate.)
    CHECK((fit.weights - ref).norm() <= 2e-16 * fit.cond * ref.norm() + 1e-14 * ref.norm());
    // Predictions are far better conditioned than weights.
    CHECK((X * fit.weights - X * ref).norm() <= 1e-9 * (X * ref).norm());
  }
}

TEST_CASE("a target inside the span is fit with R^2 = 1") {
  for (std::string m : {"rope", "alibi", "direct_sum", "jordan_rope", "jordan_scaled_m3_c010"}) {
    CAPTURE(m);
    const Eigen::MatrixXd X = train_features(m.c_str());
    const Eigen::VectorXd w0 = random_targets(X.cols(), 1, 3).col(0);
    const Eigen::VectorXd y = X * w0;
    const RidgeFit fit = fit_ridge(X, y, RidgeOptions{0.0});
    const FitQuality s = fit_quality(X * fit.weights.col(0), y);
    CAPTURE(fit.cond);
    // Without ridge the residual is rounding only: 1 - R^2 ~ (cond(X) eps)^2 << 1e-12.
    CHECK(1.0 - s.r2 <= 1e-12);
  }
}

TEST_CASE("cond and rank agree with an SVD of X")  {
  // Rank counts singular values above max(n, p) eps sigma_max; order >= 3 Jordan bases are
  // numerically rank-deficient (their lowest-frequency chain columns nearly coincide).
  for (std::string m : {"rope", "direct_sum", "jordan_rope", "jordan_raw_tau", "jordan_m3", "jordan_scaled_m4_c010"}) {
    CAPTURE(m);
    const Eigen::MatrixXd X = train_features(m.c_str());
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(X);
    const Eigen::VectorXd s = svd.singularValues();
    const double lam = 1e-4;
    const double expected = (s[0] * s[0] + lam) / (s[s.size() - 1] * s[s.size() - 1] + lam);
    const RidgeFit fit = fit_ridge(X, Eigen::VectorXd::Ones(X.rows()), RidgeOptions{lam});
    // Eigenvalues of the Gram matrix carry absolute error ~ eps sigma_max^2 ~ 1e-13 << lambda.
    CHECK(fit.cond == doctest::Approx(expected).epsilon(1e-6));
    // Pivoted QR and SVD may disagree on a singular value right at the threshold; bracket the
    // SVD rank between thresholds 10x on either side.
    const double tol = 1024 * std::numeric_limits<double>::epsilon() * s[0];
    const auto above = [&](double t) { return static_cast<int>((s.array() > t).count()); };
    CAPTURE(fit.rank);
    CHECK(fit.rank >= above(10 * tol));
    CHECK(fit.rank <= above(tol / 10));
    if (m == "rope" || m == "direct_sum" || m == "jordan_rope") CHECK(fit.rank == X.cols());
  }
}

TEST_CASE("cond of X^T X + lambda I to eps sqrt(cond): X with chosen singular values, at ridge 0, 1e-12 and 1e-4") {
  // X = U diag(s) V^T with s log-spaced from 1 to 1e-6 (U, V orthonormal from QRs of Gaussian matrices), so
  // cond = (1 + lambda) / (1e-12 + lambda) exactly. Forming U and V moves each s_i by ~ eps (absolute), i.e. s_min
  // by ~ eps / 1e-6 = 2e-10 relative, so cond is known to ~1e-9; a Gram-matrix eigenvalue route errs by
  // eps * cond ~ 2e-4 at ridge 0.
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  const int n = 300, p = 40;
  Eigen::MatrixXd A(n, p), B(p, p);
  for (Eigen::Index j = 0; j < p; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) A(i, j) = normal(gen);
    for (Eigen::Index i = 0; i < p; ++i) B(i, j) = normal(gen);
  }
  const Eigen::MatrixXd U = Eigen::HouseholderQR<Eigen::MatrixXd>(A).householderQ() * Eigen::MatrixXd::Identity(n, p);
  const Eigen::MatrixXd V = Eigen::HouseholderQR<Eigen::MatrixXd>(B).householderQ();
  Eigen::VectorXd s(p);
  for (Eigen::Index i = 0; i < p; ++i) s[i] = std::pow(10.0, -6.0 * static_cast<double>(i) / (p - 1));
  const Eigen::MatrixXd X = U * s.asDiagonal() * V.transpose();
  for (double lam : {0.0, 1e-12, 1e-4}) {
    CAPTURE(lam);
    const RidgeFit fit = fit_ridge(X, Eigen::VectorXd::Ones(n), RidgeOptions{lam});
    CHECK(fit.cond == doctest::Approx((1 + lam) / (1e-12 + lam)).epsilon(1e-8));
  }
}

TEST_CASE("duplicated columns: rank deficiency is reported and lambda = 0 still gives finite weights") {
  Eigen::MatrixXd X = train_features("rope");
  Eigen::MatrixXd Xd(X.rows(), X.cols() + 1);
  Xd << X, X.col(3);
  const Eigen::VectorXd y = X.col(3) + 0.5 * X.col(20);
  const RidgeFit fit = fit_ridge(Xd, y, RidgeOptions{0.0});
  CHECK(fit.rank == X.cols());
  CHECK(fit.weights.allFinite());
  // Minimum-norm solution splits the duplicated column's weight evenly.
  CHECK(fit.weights(3, 0) == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(fit.weights(X.cols(), 0) == doctest::Approx(0.5).epsilon(1e-9));
  CHECK((Xd * fit.weights - y).norm() <= 1e-10 * y.norm());
}

TEST_CASE("fewer training points than features still fits (ridge makes the system definite)") {
  const Eigen::MatrixXd X = train_features("jordan_m3").topRows(40);  // 40 rows, 97 columns
  const Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(40, 0, 1);
  const RidgeFit fit = fit_ridge(X, y, RidgeOptions{1e-4});
  CHECK(fit.weights.rows() == X.cols());
  CHECK(fit.rank <= 40);
  const Eigen::MatrixXd ref = normal_equations_long_double(X, y, 1e-4);
  CHECK((fit.weights - ref).norm() <= 1e-6 * ref.norm());
}

TEST_CASE("fit_ridge rejects bad input") {
  const Eigen::MatrixXd X = Eigen::MatrixXd::Ones(4, 2);
  CHECK_THROWS_AS(fit_ridge(X, Eigen::VectorXd::Ones(4), RidgeOptions{-1e-4}), InputError);
  CHECK_THROWS_AS(fit_ridge(X, Eigen::VectorXd::Ones(4), RidgeOptions{std::nan("")}), InputError);
  CHECK_THROWS_AS(fit_ridge(X, Eigen::VectorXd::Ones(3), RidgeOptions{}), InputError);
  Eigen::MatrixXd Xn = X;
  Xn(1, 1) = std::nan("");
  CHECK_THROWS_AS(fit_ridge(Xn, Eigen::VectorXd::Ones(4), RidgeOptions{}), InputError);
  CHECK_THROWS_AS(fit_ridge(Eigen::MatrixXd(0, 0), Eigen::VectorXd(0), RidgeOptions{}), InputError);
}
