// RoFormer's long-term decay bound (encodings.md section 5): against a direct sum of complex exponentials written
// differently (each S_j from scratch, std::complex<long double>, frequencies ordered by an index sort), its value
// at lag 0, its decay for RoPE (d = 128, base 1e4), and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/long_term_decay.hpp"

using namespace ropekit;

namespace {

Eigen::VectorXd rope_theta(int dim, double base) {
  Eigen::VectorXd t(dim / 2);
  for (int i = 0; i < dim / 2; ++i) t[i] = std::pow(base, -2.0 * i / dim);
  return t;
}

// (1/D) sum_{j=1}^{D} |sum_{k=0}^{j-1} exp(i lag theta_(k))|, theta_(0) >= theta_(1) >= ...: O(D^2), long double.
double direct(const Eigen::VectorXd& theta, double lag) {
  const auto D = static_cast<std::size_t>(theta.size());
  std::vector<std::size_t> order(D);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return theta[a] > theta[b]; });
  long double total = 0;
  for (std::size_t j = 1; j <= D; ++j) {
    std::complex<long double> S = 0;
    for (std::size_t k = 0; k < j; ++k) S += std::polar(1.0L, static_cast<long double>(lag) * theta[order[k]]);
    total += std::abs(S);
  }
  return static_cast<double>(total / D);
}

}  // namespace

TEST_CASE("long-term decay bound equals the direct complex sum, in any input order") {
  Eigen::VectorXd shuffled(5);
  shuffled << 0.01, 1, -0.3, 0.5, 2.5;  // signed, unsorted: sorted descending inside
  for (const Eigen::VectorXd& theta : {rope_theta(128, 1e4), rope_theta(16, 100), shuffled}) {
    for (double lag : {0.0, 1e-8, 0.5, 1.0, 7.0, 100.0, 1234.5, 1e5, -30.0}) {
      CAPTURE(theta.size());
      CAPTURE(lag);
      // The double phase lag * theta_k is off by up to |lag| theta_max eps/2 (the long double one is not), so each
      // unit term by as much and |S_j| by j times that: (D + 1)/2 |lag| theta_max eps on the bound; plus the
      // D running sums' own rounding, ~D eps relative.
      const double D = static_cast<double>(theta.size()), eps = 0x1p-52;
      const double tol = (D + 1) / 2 * std::abs(lag) * theta.cwiseAbs().maxCoeff() * eps + 4 * D * eps * direct(theta, lag);
      CHECK(std::abs(long_term_decay_bound(theta, lag) - direct(theta, lag)) <= tol);
    }
  }
}

TEST_CASE("at lag 0 every S_j = j: the bound is (1/D) sum_{j=1}^{D} j = (D + 1)/2") {
  for (int dim : {2, 4, 64, 128, 1024}) {
    CAPTURE(dim);
    const int D = dim / 2;
    CHECK(long_term_decay_bound(rope_theta(dim, 1e4), 0.0) == (D + 1) / 2.0);  // sums of integers: exact
  }
}

TEST_CASE("RoPE (d = 128, base 1e4): the bound decays, lags 1..1000 against 1e4..1e5 on average") {
  const Eigen::VectorXd theta = rope_theta(128, 1e4);
  double near = 0, far = 0;
  for (int lag = 1; lag <= 1000; ++lag) near += long_term_decay_bound(theta, lag);
  for (int i = 0; i < 1000; ++i) far += long_term_decay_bound(theta, 1e4 + 90.0 * i);
  near /= 1000, far /= 1000;
  CAPTURE(near);
  CAPTURE(far);
  CHECK(far < near);
  CHECK(near < 32.5);  // below the value at 0
}

TEST_CASE("long-term decay bound refuses no frequencies and non-finite input") {
  CHECK_THROWS_AS(long_term_decay_bound(Eigen::VectorXd(0), 1), InputError);
  CHECK_THROWS_AS(long_term_decay_bound(rope_theta(8, 100), std::nan("")), InputError);
  Eigen::VectorXd bad = rope_theta(8, 100);
  bad[2] = INFINITY;
  CHECK_THROWS_AS(long_term_decay_bound(bad, 1), InputError);
}
