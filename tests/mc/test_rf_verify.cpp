// The checks of spec rf-rope.md section 4 (lib/ropekit/mc/rf_verify.hpp): Theorem 2 and Prop 4 at
// false-alarm rate 1e-6 for every family, the power check, convergence, sampling schemes, Theorem 6.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/core/rng.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {

// Every family, with scales away from 1 so that the reciprocal-scale density differs.
const std::vector<std::string>& families() {
  static const std::vector<std::string> s = {
      "gaussian:sigma=2", "gaussian:sigma=0.5,dims=2", "cauchy:b=4", "cauchy:b=3,dims=2", "exponential:l=3",
      "exponential:l=2,dims=3", "sinc:W=2", "sinc:W=0.5,2", "matern:nu=0.7,l=3", "matern:nu=2.5,l=0.4",
      "matern:nu=1.3,l=2,dims=2", "mixture:weights=0.7,0.3,mu=0.5,3,s=0.2,0.6",
      "mixture:weights=1,1,mu=1,0,0,2,s=0.3,0.5,dims=2"};
  return s;
}

Eigen::MatrixXd default_lags(int k) {
  // The origin, a short, a typical and a long lag, spread over the axes.
  Eigen::MatrixXd lags = Eigen::MatrixXd::Zero(4, k);
  lags(1, 0) = 0.3;
  lags(2, k - 1) = 1.0;
  lags.row(3).setConstant(2.0);
  return lags;
}

VerifyReport run(const Spectrum& s, std::optional<Spectrum> draw, Sampling sampling, std::uint64_t seed) {
  VerifyOptions o;
  o.spectrum = s;
  o.draw = std::move(draw);
  o.content = make_content(ContentKind::random, 32, seed);
  o.lags = default_lags(dims(s));
  o.mc.trials = 20000;
  o.mc.seed = seed;
  o.mc.sampling = sampling;
  o.alpha = 1e-6;
  return verify(o);
}
}  // namespace

TEST_CASE("Theorem 2 and Proposition 4 pass at false-alarm rate 1e-6 (Bonferroni over lags) for every family") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  for (const auto& text : families()) {
    CAPTURE(text);
    const Spectrum s = parse_spectrum(text);
    const VerifyReport r = run(s, std::nullopt, Sampling::iid, seed);
    CAPTURE(r.z_critical);
    CAPTURE(r.max_abs_z);
    CAPTURE(r.max_abs_z_var);
    CHECK(r.mean_pass);
    CHECK(r.var_pass);
  }
  // A frequency file (RoPE's own frequencies, symmetrised by random signs) is a spectrum too.
  const Spectrum file = parse_frequency_text("1\n0.1\n0.01\n0.001\n", "rope-like");
  const VerifyReport r = run(file, std::nullopt, Sampling::iid, seed);
  CHECK(r.mean_pass);
  CHECK(r.var_pass);
}

TEST_CASE("antithetic pairs pass both checks against their own variance formula, and stratified draws stay unbiased") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  for (const char* text : {"cauchy:b=4", "matern:nu=1.3,l=2,dims=2", "sinc:W=2"}) {
    CAPTURE(text);
    const VerifyReport a = run(parse_spectrum(text), std::nullopt, Sampling::antithetic, seed);
    CHECK(a.mean_pass);
    CHECK(a.var_pass);
  }
  for (const char* text : {"gaussian:sigma=2", "cauchy:b=4", "exponential:l=3", "sinc:W=2", "matern:nu=0.7,l=3",
                           "mixture:weights=0.7,0.3,mu=0.5,3,s=0.2,0.6"}) {
    CAPTURE(text);
    const VerifyReport st = run(parse_spectrum(text), std::nullopt, Sampling::stratified, seed);
    CHECK(st.mean_pass);
    CHECK(std::isnan(st.lags[1].var_expected));  // no closed form: no variance claim
  }
}

TEST_CASE("power: drawing from the reciprocal-scale density (the Cauchy erratum's mistake) fails for every family") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  for (const auto& text : families()) {
    CAPTURE(text);
    const Spectrum s = parse_spectrum(text);
    REQUIRE(differs(s, wrong_density(s), default_lags(dims(s))));
    const VerifyReport r = run(s, wrong_density(s), Sampling::iid, seed);
    CAPTURE(r.max_abs_z);
    CHECK_FALSE(r.mean_pass);
  }
  // The erratum itself: b = 4, frequencies from e^{-|w|/b} (Laplace(0, b)) have kernel 1/(1 + b^2 Dp^2).
  const Spectrum right = parse_spectrum("cauchy:b=4"), erratum = parse_spectrum("cauchy:b=0.25");
  const VerifyReport r = run(right, erratum, Sampling::iid, seed);
  CHECK_FALSE(r.mean_pass);
  const double lag[1] = {1.0};
  CHECK(phi(erratum, lag) == doctest::Approx(1 / (1 + 16.0)).epsilon(1e-15));
  CHECK(phi(right, lag) == doctest::Approx(1 / (1 + 1 / 16.0)).epsilon(1e-15));
}

TEST_CASE("convergence: the relative RMS error falls as D^(-1/2), but not with the wrong density") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  ConvergenceOptions o;
  o.lags = Eigen::MatrixXd(3, 1);
  o.lags << 0.5, 1, 2;
  o.blocks = {8, 16, 32, 64, 128, 256, 512};
  o.mc.trials = 1000;
  o.mc.seed = seed;
  for (const char* text : {"gaussian:sigma=2", "cauchy:b=4", "matern:nu=0.7,l=3"}) {
    CAPTURE(text);
    o.spectrum = parse_spectrum(text);
    o.draw.reset();
    const ConvergenceReport r = convergence(o);
    CAPTURE(r.slope);
    CAPTURE(r.slope_expected);
    CHECK(r.pass);
    CHECK(std::abs(r.slope - r.slope_expected) <= 0.05);  // 1000 trials: each point within ~3%, slope within ~0.01
    o.draw = wrong_density(o.spectrum);
    CHECK_FALSE(convergence(o).pass);  // a bias floor: the error stops falling
  }
}

TEST_CASE("sampling comparison: observed variances match Prop 4 for i.i.d. and antithetic draws") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Spectrum s = parse_spectrum("gaussian:sigma=2");
  McOptions mc;
  mc.trials = 20000;
  mc.seed = seed;
  Eigen::MatrixXd lags(3, 1);
  lags << 0.5, 2, 5;
  const auto rows = compare_sampling(s, make_content(ContentKind::correlated, 32, seed), lags, mc);
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) {
    CAPTURE(r.lag[0]);
    // s^2 of 20000 bounded scores: relative standard error ~1-2%; 10% is > 5 standard errors.
    CHECK(r.var_iid == doctest::Approx(r.var_iid_expected).epsilon(0.1));
    CHECK(r.var_antithetic == doctest::Approx(r.var_antithetic_expected).epsilon(0.1));
    CHECK(std::isfinite(r.var_stratified));
  }
}

TEST_CASE("Theorem 6: every kernel peaks at the origin, Phi <= Phi(0) = 1") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  for (const auto& text : families()) {
    CAPTURE(text);
    const PeakCheck p = check_peak(parse_spectrum(text), seed);
    CAPTURE(p.max_phi);
    CHECK(p.pass);
    CHECK(p.phi0 == 1.0);
    CHECK(p.max_phi < 1.0);
  }
}

TEST_CASE("k-dimensional lags: semicolons separate lag vectors, commas their components") {
  const Eigen::MatrixXd a = parse_lags("1,0;0,2;3,4", 2);
  REQUIRE(a.rows() == 3);
  CHECK(a(1, 1) == 2);
  CHECK(a(2, 0) == 3);
  CHECK(parse_lags("1,2", 2).rows() == 1);   // k >= 2 without ';': one lag vector
  CHECK(parse_lags("0:4", 1).rows() == 4);   // k = 1: a list or range of lags
  CHECK(parse_lags("1;2;3", 1).rows() == 3);
  CHECK_THROWS_WITH_AS(parse_lags("1,2,3;4,5", 2), doctest::Contains("'1,2,3' (3 components)"), InputError);
  CHECK_THROWS_AS(parse_lags("1;;2", 1), InputError);
  CHECK_THROWS_AS(parse_lags("", 1), InputError);
  CHECK_THROWS_AS(parse_lags("1,nan", 2), InputError);
  CHECK(lag_text(std::vector<double>{1, 0.5}) == "1,0.5");
  // Bonferroni: alpha = 1e-6 over one lag is the normal quantile at 1 - 5e-7, 4.891638 (tables); over 5 lags
  // each lag gets 2e-7, two-sided: the quantile at 1 - 1e-7, 5.199338.
  CHECK(bonferroni_z(1e-6, 1) == doctest::Approx(4.891638).epsilon(1e-6));
  CHECK(bonferroni_z(1e-6, 5) == doctest::Approx(5.199338).epsilon(1e-6));
  CHECK_THROWS_AS(bonferroni_z(0, 1), InputError);
}

TEST_CASE("alpha below 2 L DBL_MIN is refused before Boost's quantile overflows") {
  // Tail probability p = alpha / (2 L) = DBL_MIN: the normal quantile is sqrt(T - ln(2 pi T)) to ~1e-3 relative,
  // T = 2 ln(1/p) (the leading terms of its asymptotic expansion).
  const double p = std::numeric_limits<double>::min();
  const double T = 2 * std::log(1 / p);
  CHECK(bonferroni_z(min_alpha(5), 5) == doctest::Approx(std::sqrt(T - std::log(2 * M_PI * T))).epsilon(3e-3));
  CHECK(min_alpha(5) == 10 * p);
  CHECK_THROWS_AS(bonferroni_z(4.9e-324, 5), InputError);  // the issue's --alpha: Boost overflow error before
  CHECK_THROWS_AS(bonferroni_z(min_alpha(5) / 2, 5), InputError);
}
