// jordan_block.hpp: the closed-form realified Jordan block against independent routes (Eigen's matrix
// exponential of the realified generator, the group law, the fixed-basis feature row).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/encodings/basis.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/jordan_block.hpp"

using namespace ropekit;

namespace {
constexpr double kEps = std::numeric_limits<double>::epsilon();

double max_abs(const Eigen::MatrixXd& M) { return M.cwiseAbs().maxCoeff(); }

const JordanBlock kBlocks[] = {
    {1, 0.0, 1.0, 0.1},   {2, 1e-3, 1.0, 0.1},  {2, 0.0, 0.37, 1.0},
    {3, 0.05, 2.5, -0.3}, {4, 1e-4, 0.01, 0.1}, {4, 0.2, 1.0, 2.0},
};
}  // namespace

TEST_CASE("closed-form G(d) equals exp(d J) of the realified generator: near zero, tiny and typical lags") {
  for (const auto& b : kBlocks)
    for (double d : {0.0, 1e-8, -1e-8, 0.5, -3.0, 17.0, 60.0}) {
      CAPTURE(b.m);
      CAPTURE(b.gamma);
      CAPTURE(b.omega);
      CAPTURE(b.eta);
      CAPTURE(d);
      const Eigen::MatrixXd closed = jordan_exp(b, d);
      const Eigen::MatrixXd viaexp = (d * jordan_generator(b)).exp();
      // Scaling and squaring on an argument of norm a = |d| |J| carries ~a eps relative to the largest entry;
      // the closed form ~(m + |omega d| + |gamma d|) eps. 64 (1 + a) eps covers both with room.
      const double a = std::fabs(d) * jordan_generator(b).norm();
      CHECK(max_abs(closed - viaexp) <= 64.0 * (1.0 + a) * kEps * std::max(1.0, max_abs(closed)));
    }
}

TEST_CASE("G is a one-parameter group: G(0) = I, G(s) G(t) = G(s + t), G(d)^{-1} = G(-d)") {
  for (const auto& b : kBlocks) {
    CAPTURE(b.m);
    const Eigen::Index n = 2 * b.m;
    CHECK(max_abs(jordan_exp(b, 0.0) - Eigen::MatrixXd::Identity(n, n)) == 0.0);
    for (double s : {1e-8, 0.3, 5.0, 40.0})
      for (double t : {-7.0, 1e-8, 2.0, 33.0}) {
        CAPTURE(s);
        CAPTURE(t);
        const Eigen::MatrixXd lhs = jordan_exp(b, s) * jordan_exp(b, t), rhs = jordan_exp(b, s + t);
        // Products of 2m-term sums of entries each within ~(m + |omega| |s| + |gamma| |s|) eps: 64 (1 + |s| + |t|) eps
        // relative to |G(s)| |G(t)|.
        const double scale = max_abs(jordan_exp(b, s)) * max_abs(jordan_exp(b, t)) * n;
        CHECK(max_abs(lhs - rhs) <= 64.0 * (1.0 + std::fabs(s) + std::fabs(t)) * kEps * scale);
        const Eigen::MatrixXd I = jordan_exp(b, s) * jordan_exp(b, -s);
        CHECK(max_abs(I - Eigen::MatrixXd::Identity(n, n)) <=
              64.0 * (1.0 + std::fabs(s)) * kEps * max_abs(jordan_exp(b, s)) * max_abs(jordan_exp(b, -s)) * n);
      }
  }
}

TEST_CASE("the sheared block at s = d is G(d), and its coefficients are e^{-gamma d} (eta s)^p / p!") {
  const JordanBlock b{4, 0.01, 0.7, 0.2};
  CHECK(max_abs(jordan_exp_sheared(b, 12.0, 12.0) - jordan_exp(b, 12.0)) == 0.0);
  const Eigen::VectorXd coef = jordan_coefficients(b, 12.0, 5.0);
  const double e = std::exp(-0.12), x = 0.2 * 5.0;
  CHECK(coef[0] == doctest::Approx(e).epsilon(1e-15));
  CHECK(coef[1] == doctest::Approx(e * x).epsilon(1e-15));
  CHECK(coef[2] == doctest::Approx(e * x * x / 2).epsilon(1e-15));
  CHECK(coef[3] == doctest::Approx(e * x * x * x / 6).epsilon(1e-15));
  // Block (r, c) = coef[c - r] R(omega d); below the diagonal zero.
  const Eigen::MatrixXd G = jordan_exp_sheared(b, 12.0, 5.0);
  CHECK(G(2, 6) == doctest::Approx(coef[2] * std::cos(0.7 * 12.0)).epsilon(1e-14));
  CHECK(G(3, 6) == doctest::Approx(coef[2] * std::sin(0.7 * 12.0)).epsilon(1e-14));
  CHECK(G(2, 7) == doctest::Approx(-coef[2] * std::sin(0.7 * 12.0)).epsilon(1e-14));
  CHECK(G(6, 2) == 0.0);
}

TEST_CASE("the first block row of G(d) is the fixed-basis Jordan feature row (raw tau, eta = 1/L)") {
  BasisParams p;
  p.num_freqs = 3;
  p.head_dim = 64;
  p.gamma = 2e-3;
  p.train_context = 1024;
  p.bounded_tau = false;
  const Eigen::VectorXd w = p.frequencies();
  const int m = 3, F = p.num_freqs;
  Eigen::VectorXd lags(4);
  lags << 0, 1, 100, 8191;
  const Eigen::MatrixXd X = features(method::Jordan{m, std::nullopt, std::nullopt}, p, lags);
  for (int k = 0; k < F; ++k) {
    const JordanBlock b{m, p.gamma, w[k], 1.0 / p.train_context};
    for (Eigen::Index r = 0; r < lags.size(); ++r) {
      const Eigen::MatrixXd G = jordan_exp(b, lags[r]);
      for (int q = 0; q < m; ++q) {
        CAPTURE(k);
        CAPTURE(lags[r]);
        CAPTURE(q);
        // Columns: "1", then for each q: cos_0..cos_{F-1}, sin_0..sin_{F-1}. Same formula, different order of
        // rounding: a few eps relative.
        CHECK(G(0, 2 * q) == doctest::Approx(X(r, 1 + q * 2 * F + k)).epsilon(1e-13));
        CHECK(G(1, 2 * q) == doctest::Approx(X(r, 1 + q * 2 * F + F + k)).epsilon(1e-13));
      }
    }
  }
}

TEST_CASE("bad Jordan blocks throw InputError naming the parameter") {
  CHECK_THROWS_AS(jordan_generator(JordanBlock{0, 0, 1, 0.1}), InputError);
  CHECK_THROWS_AS(jordan_exp(JordanBlock{kMaxJordanOrder + 1, 0, 1, 0.1}, 1.0), InputError);
  CHECK_THROWS_WITH_AS(jordan_exp(JordanBlock{2, NAN, 1, 0.1}, 1.0), doctest::Contains("gamma = nan"), InputError);
  CHECK_THROWS_WITH_AS(jordan_exp(JordanBlock{2, 0, 1, INFINITY}, 1.0), doctest::Contains("eta = inf"), InputError);
}
