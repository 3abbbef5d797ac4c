// The null laws of verify content's statistics (lib/ropekit/mc/score_null.hpp): the score's cumulants against
// the closed form of a product of correlated normals and against the encodings' closed-form variances, the
// k-statistic's third cumulant against exhaustive enumeration, the Pearson III normal score against the exact
// chi-square law of a normal sample's variance, and the refusal of an N too small to calibrate.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>

#include "ropekit/core/error.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/mc/content_verify.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/mc/score_null.hpp"

using namespace ropekit;

TEST_CASE("cumulants of g q k, corr(q, k) = rho: kappa_r = g^r (r-1)! ((1+rho)^r + (-1)^r (1-rho)^r) / 2") {
  // The mgf of q k is ((1 - (1+rho) t) (1 + (1-rho) t))^(-1/2), whose log gives the closed form.
  for (double rho : {-1.0, -0.6, 0.0, 0.3, 1.0}) {
    for (double g : {1.0, -2.5, 1e-3}) {
      CAPTURE(rho);
      CAPTURE(g);
      Eigen::MatrixXd G(1, 1);
      G(0, 0) = g;
      const auto k = bilinear_score_cumulants(G, rho);
      double fact = 1;
      for (int r = 1; r <= 6; ++r) {
        if (r > 1) fact *= (r - 1);
        const double expected = std::pow(g, r) * fact * (std::pow(1 + rho, r) + std::pow(-1.0, r) * std::pow(1 - rho, r)) / 2;
        // six products of 2 x 2 matrices: a few eps of the largest term
        CHECK(k[static_cast<std::size_t>(r)] == doctest::Approx(expected).epsilon(1e-13).scale(std::pow(std::abs(g), r) * fact * 64));
      }
    }
  }
}

TEST_CASE("kappa_1 and kappa_2 are the closed-form mean and variance of every family's score") {
  for (const char* text : {"rope:dim=8", "alibi:slope=0.5,L=10", "jordan:m=3,dim=8,gamma=0.01", "xpos:dim=8",
                           "direct-sum:[rope(dim=4),alibi(slope=2)]", "damped:dim=6,gamma=0.1"}) {
    const Encoding e = parse_encoding(text);
    for (double lag : {0.0, 1.0, 30.0}) {
      for (double rho : {-0.6, 0.0, 0.9}) {
        CAPTURE(text);
        CAPTURE(lag);
        CAPTURE(rho);
        const std::vector<double> l{lag};
        const Eigen::MatrixXd G = relative_operator(e, l);
        const auto k = bilinear_score_cumulants(G, rho);
        Lags lags(1, 1);
        lags(0, 0) = lag;
        const auto row = kernel_rows(e, lags, rho).front();
        // block closed forms vs traces of 2n x 2n products: rounding of sums of n^2 terms
        CHECK(k[1] == doctest::Approx(row.content_mean).epsilon(1e-12).scale(G.squaredNorm() + 1));
        CHECK(k[2] == doctest::Approx(row.content_variance).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("cumulants add over G's uncoupled parts: a permuted block-diagonal G equals the dense power traces") {
  // Dense route written here: tr((M Sigma)^r) from powers of the 2n x 2n matrix, no splitting into parts.
  const int n = 7;
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, n);
  G.block(0, 0, 3, 3) << 1, 2, 0, -1, 0.5, 3, 0, 1, 1;
  G.block(3, 3, 2, 2) << 0.3, -2, 0.7, 1;
  G(5, 5) = -1.5;  // index 6 is an empty row and column
  const std::vector<int> perm{4, 0, 6, 2, 5, 1, 3};
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) P(i, perm[static_cast<std::size_t>(i)]) = 1;
  const Eigen::MatrixXd Gp = P * G * P.transpose();
  for (double rho : {-0.4, 0.8}) {
    CAPTURE(rho);
    Eigen::MatrixXd A(2 * n, 2 * n);
    A << 0.5 * rho * Gp, 0.5 * Gp, 0.5 * Gp.transpose(), 0.5 * rho * Gp.transpose();
    const auto k = bilinear_score_cumulants(Gp, rho);
    Eigen::MatrixXd Ar = A;
    double factor = 1;
    for (int r = 1; r <= 6; ++r) {
      if (r > 1) {
        Ar = Ar * A;
        factor *= 2.0 * (r - 1);
      }
      CAPTURE(r);
      CHECK(k[static_cast<std::size_t>(r)] == doctest::Approx(factor * Ar.trace()).epsilon(1e-11).scale(factor * std::pow(6.0, r)));
    }
  }
}

TEST_CASE("sample_variance_moments: mean, variance and third cumulant of k_2 by enumerating Bernoulli samples") {
  // Every sample of N draws of a Bernoulli(p) variable, weighted by its probability: the exact law of k_2.
  for (int N : {3, 4, 7}) {
    for (double p : {0.2, 0.5}) {
      CAPTURE(N);
      CAPTURE(p);
      double m1 = 0, m2 = 0, m3 = 0;  // raw moments of k_2
      for (int ones = 0; ones <= N; ++ones) {
        const double prob = std::tgamma(N + 1.0) / (std::tgamma(ones + 1.0) * std::tgamma(N - ones + 1.0)) *
                            std::pow(p, ones) * std::pow(1 - p, N - ones);
        const double mean = static_cast<double>(ones) / N;
        const double k2 = (ones * (1 - mean) * (1 - mean) + (N - ones) * mean * mean) / (N - 1);
        m1 += prob * k2;
        m2 += prob * k2 * k2;
        m3 += prob * k2 * k2 * k2;
      }
      const double var = m2 - m1 * m1, third = m3 - 3 * m1 * m2 + 2 * m1 * m1 * m1;
      // Bernoulli cumulants: kappa_1 = p, then kappa_{r+1} = p (1 - p) d kappa_r / dp.
      const double q = 1 - p;
      std::array<double, 7> k{};
      k[1] = p;
      k[2] = p * q;
      k[3] = p * q * (1 - 2 * p);
      k[4] = p * q * (1 - 6 * p * q);
      k[5] = p * q * (1 - 2 * p) * (1 - 12 * p * q);
      k[6] = p * q * (1 - 30 * p * q + 120 * p * p * q * q);
      const auto law = sample_variance_moments(k, N);
      CHECK(law.mean == doctest::Approx(m1).epsilon(1e-13));
      CHECK(law.variance == doctest::Approx(var).epsilon(1e-12).scale(1e-3));
      CHECK(law.third == doctest::Approx(third).epsilon(1e-11).scale(1e-4));
    }
  }
}

TEST_CASE("pearson3_z of a normal sample's variance is the exact chi-square normal score") {
  // (N - 1) k_2 / sigma^2 ~ chi^2_(N-1) for normal data, a gamma law: the three-moment Pearson III law is exact.
  const boost::math::normal unit;
  for (int N : {5, 30, 3000}) {
    const double sigma2 = 2.5;
    std::array<double, 7> k{};
    k[2] = sigma2;  // kappa_r = 0 for r != 2
    const auto law = sample_variance_moments(k, N);
    const boost::math::chi_squared chi(N - 1);
    for (double x : {0.05, 0.5, 1.0, 2.0, 4.0}) {
      CAPTURE(N);
      CAPTURE(x);
      const double v = x * sigma2;
      const double c = (N - 1) * x;
      if (boost::math::cdf(chi, c) < 1e-300 || boost::math::cdf(boost::math::complement(chi, c)) < 1e-300) continue;
      const double expected = c < boost::math::median(chi) ? boost::math::quantile(unit, boost::math::cdf(chi, c))
                                                           : -boost::math::quantile(unit, boost::math::cdf(boost::math::complement(chi, c)));
      CHECK(pearson3_z(v, law) == doctest::Approx(expected).epsilon(1e-9).scale(1));
    }
  }
  // Zero skew: the normal law; a law of zero variance: 0 at its mean, +-inf elsewhere.
  CHECK(pearson3_z(3, {1, 4, 0}) == doctest::Approx(1).epsilon(1e-15));
  CHECK(pearson3_z(1, {1, 0, 0}) == 0);
  CHECK(pearson3_z(2, {1, 0, 0}) == std::numeric_limits<double>::infinity());
  // Negative skew mirrors positive skew.
  CHECK(pearson3_z(-1.3, {-1, 0.2, -0.05}) == doctest::Approx(-pearson3_z(1.3, {1, 0.2, 0.05})).epsilon(1e-14));
  // Tail probabilities below the smallest double: infinite scores, no exception.
  CHECK(pearson3_z(1e6, {1, 1e-4, 1e-7}) == std::numeric_limits<double>::infinity());
  // Below the support of a right-skewed law: -inf.
  CHECK(pearson3_z(-10, {1, 1, 2}) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("verify_content refuses an N too small to calibrate the variance check, naming the N that would do") {
  ContentVerifyOptions o;
  o.encoding = parse_encoding("alibi:slope=0.5,L=10");
  o.lags = Lags::Constant(1, 1, 30);
  o.rho = -0.6;
  o.mc.trials = 100;
  o.alpha = 0.05;
  std::string message;
  try {
    verify_content(o);
  } catch (const InputError& e) {
    message = e.what();
  }
  CAPTURE(message);
  REQUIRE(message.find("trials = 100 (must be at least ") != std::string::npos);
  const auto at = message.find("at least ") + 9;
  const std::int64_t need = std::stoll(message.substr(at));
  CHECK(need > 100);
  // The N it names is accepted, one fewer is not.
  o.mc.trials = need;
  CHECK_NOTHROW(verify_content(o));
  o.mc.trials = need - 1;
  CHECK_THROWS_AS(verify_content(o), InputError);
  // The smallest such N, by the skewness of k_2 at the lag's operator (skew (z^2 - 1) / 6 <= kMaxSkewTerm).
  const auto kappa = bilinear_score_cumulants(relative_operator(o.encoding, std::vector<double>{30}), -0.6);
  const double z = bonferroni_z(0.05, 2);
  auto term = [&](std::int64_t N) { return skewness(sample_variance_moments(kappa, static_cast<double>(N))) * (z * z - 1) / 6; };
  CHECK(term(need) <= kMaxSkewTerm);
  CHECK(term(need - 1) > kMaxSkewTerm);
}
