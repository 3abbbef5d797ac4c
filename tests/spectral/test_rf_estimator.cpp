// The RF-RoPE estimator (lib/ropekit/spectral/rf_estimator.hpp): the block decomposition against explicit
// rotations, and Theorem 2 / Proposition 4 exactly, by enumerating every draw of a discrete spectrum.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/spectral/rf_estimator.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {
}  // namespace

TEST_CASE("S = sum A_i cos u_i + B_i sin u_i equals the rotated query-key dot product (paper eq. Si-decomp)") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  Rng rng(seed, 7);
  for (int k : {1, 2, 3}) {
    const Content content = make_content(ContentKind::random, 9, seed);
    const Coefficients c = coefficients(content);
    Eigen::MatrixXd w(9, k);
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = 3 * rng.normal();
    std::vector<double> pm(static_cast<std::size_t>(k)), pn(pm.size()), lag(pm.size());
    for (int j = 0; j < k; ++j) {
      pm[static_cast<std::size_t>(j)] = 10 * rng.normal();
      pn[static_cast<std::size_t>(j)] = 10 * rng.normal();
      lag[static_cast<std::size_t>(j)] = pn[static_cast<std::size_t>(j)] - pm[static_cast<std::size_t>(j)];
    }
    CAPTURE(k);
    // Angles up to ~100 rad: the two routes round them differently, ~1e-13 absolute.
    CHECK(score(c, w, lag) == doctest::Approx(score_by_rotation(content, w, pm, pn)).epsilon(1e-12));
  }
  // B_i = q_i^T J k_i with J = [[0,-1],[1,0]]: q = (1, 0), k = (0, 1) gives q^T (-1, 0)... = -1.
  const Content c = content_from_vectors({1, 0}, {0, 1});
  CHECK(coefficients(c).A[0] == 0);
  CHECK(coefficients(c).B[0] == -1);
}

namespace {
// Exact E[S] and Var[S] over every draw of a discrete spectrum: each block's frequency is +-w_j with
// probability 1/(2n) (`pairs` true: blocks (2m, 2m+1) share w with opposite signs).
std::pair<double, double> enumerate(const spectral::Empirical& e, const Coefficients& c, std::span<const double> lag,
                                    bool antithetic) {
  const Eigen::Index n = e.w.rows(), k = e.w.cols(), D = c.A.size();
  std::vector<std::vector<double>> values;  // the 2n equiprobable frequency vectors
  for (Eigen::Index r = 0; r < n; ++r)
    for (double sign : {1.0, -1.0}) {
      std::vector<double> v(static_cast<std::size_t>(k));
      for (Eigen::Index j = 0; j < k; ++j) v[static_cast<std::size_t>(j)] = sign * e.w(r, j);
      values.push_back(v);
    }
  const Eigen::Index draws = antithetic ? (D + 1) / 2 : D;
  long double sum = 0, sum2 = 0, count = 0;
  std::vector<std::size_t> pick(static_cast<std::size_t>(draws), 0);
  while (true) {
    Eigen::MatrixXd w(D, k);
    for (Eigen::Index i = 0; i < D; ++i) {
      const Eigen::Index d = antithetic ? i / 2 : i;
      const double sign = (antithetic && i % 2 && i / 2 < D / 2) ? -1.0 : 1.0;
      for (Eigen::Index j = 0; j < k; ++j) w(i, j) = sign * values[pick[static_cast<std::size_t>(d)]][static_cast<std::size_t>(j)];
    }
    const long double s = score(c, w, lag);
    sum += s;
    sum2 += s * s;
    count += 1;
    std::size_t p = 0;
    while (p < pick.size() && ++pick[p] == values.size()) pick[p++] = 0;
    if (p == pick.size()) break;
  }
  const long double mean = sum / count;
  return {static_cast<double>(mean), static_cast<double>(sum2 / count - mean * mean)};
}
}  // namespace

TEST_CASE("Theorem 2 and Proposition 4 hold exactly for a discrete symmetric spectrum (all draws enumerated)") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const spectral::Empirical e1 = parse_frequency_text("0.3\n1.1\n2.0\n", "1-D");
  const spectral::Empirical e2 = parse_frequency_text("0.3 -0.7\n1.1 0.2\n", "2-D");
  for (const auto* e : {&e1, &e2}) {
    const Spectrum s = *e;
    for (int D : {3, 4, 5}) {
      const Content content = make_content(ContentKind::random, D, seed + static_cast<std::uint64_t>(D));
      const Coefficients c = coefficients(content);
      std::vector<double> lag(static_cast<std::size_t>(dims(s)));
      for (double scale : {0.0, 0.37, 1.9}) {
        for (std::size_t j = 0; j < lag.size(); ++j) lag[j] = scale * (1.0 + 0.5 * static_cast<double>(j));
        CAPTURE(e->source);
        CAPTURE(D);
        CAPTURE(scale);
        const auto [mean, var] = enumerate(*e, c, lag, false);
        // Enumeration sums up to 6^5 scores in long double: the references are good to ~1e-15 relative;
        // the closed forms' own rounding is a few eps of sum A^2 + B^2.
        const double tol = 1e-13 * (c.A.squaredNorm() + c.B.squaredNorm() + 1);
        CHECK(std::abs(expected_score(s, c, lag) - mean) <= tol);
        CHECK(std::abs(score_variance(s, c, lag) - var) <= tol);
        // Prop 4 as printed, summed over blocks, is the same number.
        const KernelValues kv = kernel_values(s, lag);
        double printed = 0;
        for (Eigen::Index i = 0; i < c.A.size(); ++i) printed += block_variance_paper(c.A[i], c.B[i], kv.phi, kv.phi2);
        CHECK(std::abs(printed - var) <= tol);
        // Antithetic pairs: the pair formula (A = A_2j + A_2j+1, B = B_2j - B_2j+1).
        const auto [amean, avar] = enumerate(*e, c, lag, true);
        CHECK(std::abs(expected_score(s, c, lag) - amean) <= tol);
        CHECK(std::abs(score_variance(s, c, lag, Sampling::antithetic) - avar) <= tol);
      }
    }
  }
}

TEST_CASE("Prop 4 without cancellation near the origin: the psi form keeps Var[sin u] where the printed form loses it") {
  // Gaussian sigma = 1, lag d: Var[sin u] = (1 - e^{-2 d^2})/2 = d^2 - d^4 + (2/3) d^6 - ... (Taylor),
  // Var[cos u] = (1 + e^{-2d^2})/2 - e^{-d^2} = d^4/2 - d^6/2 + ...; content with A = 0, B = 1: Var(S) = Var[sin u].
  const Spectrum s = parse_spectrum("gaussian:sigma=1");
  const Content content = content_from_vectors({1, 0}, {0, -1});
  const Coefficients c = coefficients(content);
  REQUIRE(c.A[0] == 0);
  REQUIRE(c.B[0] == 1);
  for (double d : {1e-9, 1e-6, 1e-3}) {
    const double lag[1] = {d};
    const double d2 = d * d, taylor = d2 - d2 * d2 + 2.0 / 3 * d2 * d2 * d2;
    CAPTURE(d);
    CHECK(score_variance(s, c, lag) == doctest::Approx(taylor).epsilon(1e-13));  // next Taylor term ~ d^8
    // Var[cos u] = 2 psi - psi2/2 - psi^2 still cancels (to d^4 from terms ~d^2): its error is ~eps psi,
    // relative eps/d^2, negligible next to any B^2 Var[sin u] ~ d^2. Checked where that is below 1e-3.
    if (d >= 1e-6) {
      const KernelValues kv = kernel_values(s, lag);
      CHECK(kv.var_cos == doctest::Approx(d2 * d2 / 2 - d2 * d2 * d2 / 2).epsilon(d < 1e-5 ? 1e-3 : 1e-8));
    }
  }
  // The printed form (B^2 (1 - Phi2)/2) computes 1 - Phi2 by subtraction: at d = 1e-9 it is all rounding.
  const double lag[1] = {1e-9};
  const KernelValues kv = kernel_values(s, lag);
  CHECK(std::abs(block_variance_paper(0, 1, kv.phi, kv.phi2) - 1e-18) > 1e-20);
}

TEST_CASE("content kinds: their promised structure, prefix-stable in D, and bad explicit content") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Coefficients aligned = coefficients(make_content(ContentKind::aligned, 16, seed));
  for (Eigen::Index i = 0; i < 16; ++i) {
    CHECK(aligned.A[i] == doctest::Approx(1).epsilon(1e-15));
    CHECK(std::abs(aligned.B[i]) <= 1e-15);
  }
  const Coefficients corr = coefficients(make_content(ContentKind::correlated, 64, seed));
  CHECK(corr.A.minCoeff() >= 0.5 - 1e-15);
  CHECK(corr.A.maxCoeff() <= 1 + 1e-15);
  const Content big = make_content(ContentKind::random, 32, seed), small = make_content(ContentKind::random, 8, seed);
  CHECK(big.q.topRows(8) == small.q);
  CHECK(big.k.topRows(8) == small.k);
  CHECK_THROWS_AS(make_content(ContentKind::random, 0, seed), InputError);
  CHECK_THROWS_AS(content_from_vectors({1, 2, 3}, {1, 2, 3}), InputError);
  CHECK_THROWS_AS(content_from_vectors({1, 2}, {1, 2, 3, 4}), InputError);
  CHECK_THROWS_AS(content_from_vectors({1, NAN}, {1, 2}), InputError);
  CHECK_THROWS_AS(parse_content_kind("isotropic"), InputError);
  CHECK_THROWS_AS(parse_sampling("sobol"), InputError);
}
