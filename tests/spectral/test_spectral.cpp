// Spectral families (lib/ropekit/spectral/spectrum.hpp): the closed-form kernels against quadrature of the
// density's cosine transform, the contract every kernel keeps, the samplers against Boost.Math's
// distributions (moments and chi-square goodness of fit), and bad parameters.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <boost/math/distributions/cauchy.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/laplace.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/distributions/uniform.hpp>
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/quadrature/ooura_fourier_integrals.hpp>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "tests/support.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {

// Every family, 1-D and k-D, with scales away from 1 (so reciprocal mistakes would show).
const std::vector<std::string>& all_spectra() {
  static const std::vector<std::string> s = {
      "gaussian:sigma=0.7",
      "gaussian:sigma=2,dims=3",
      "cauchy:b=2",
      "cauchy:b=0.5,dims=2",
      "exponential:l=1.5",
      "exponential:l=0.8,dims=3",
      "sinc:W=2",
      "sinc:W=1,3",
      "matern:nu=0.7,l=1.3",
      "matern:nu=1.5,l=1.3",
      "matern:nu=2.5,l=0.6",
      "matern:nu=3.3,l=0.8",
      "matern:nu=1.2,l=2,dims=2",
      "matern:nu=150,l=2",
      "mixture:weights=0.7,0.3,mu=0.5,3,s=0.2,0.6",
      "mixture:weights=1,2,mu=1,0,0,2,s=0.3,0.1,0.2,0.4,dims=2",
  };
  return s;
}


// Upper chi-square bounds at false-alarm rate 1e-6 per check (z_bound: tests/support.hpp).
constexpr double kAlpha = 1e-6;

// Phi(d) by quadrature of the 1-D density: 2 int_0^inf p(w) cos(d w) dw / (2 int_0^inf p(w) dw).
// Dividing by the quadrature of the density removes any normalisation error of the test's density
// (for nu = 150 the lgamma differences of ~600 carry ~1e-13).
double phi_by_quadrature_1d(const Spectrum& s, double d) {
  auto p = [&](double w) {
    const double ww[1] = {w};
    return density(s, ww);
  };
  if (const auto* c = std::get_if<spectral::Sinc>(&s)) {  // finite support: Gauss-Kronrod on [0, W]
    const double W = c->W[0];
    const double num = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
        [&](double w) { return p(w) * std::cos(d * w); }, 0.0, W, 12, 1e-15);
    return 2 * num;
  }
  boost::math::quadrature::exp_sinh<double> es;
  const double mass = es.integrate(p, 0.0, std::numeric_limits<double>::infinity(), 1e-15);
  if (d == 0) return 1.0;
  boost::math::quadrature::ooura_fourier_cos<double> oc;
  return oc.integrate(p, d).first / mass;
}

// Each 1-D family's frequency law as a Boost.Math distribution: the independent reference for quantiles
// and goodness-of-fit bins (Laplace(0, 1/b), Cauchy(0, 1/l), U(-W, W), Student-t(2 nu) / l).
std::vector<std::pair<std::string, std::function<double(double)>>> reference_quantiles() {
  return {
      {"gaussian:sigma=0.7", [](double u) { return boost::math::quantile(boost::math::normal_distribution<double>(0, 1 / 0.7), u); }},
      {"cauchy:b=2", [](double u) { return boost::math::quantile(boost::math::laplace_distribution<double>(0, 0.5), u); }},
      {"exponential:l=1.5", [](double u) { return boost::math::quantile(boost::math::cauchy_distribution<double>(0, 1 / 1.5), u); }},
      {"sinc:W=2", [](double u) { return boost::math::quantile(boost::math::uniform_distribution<double>(-2, 2), u); }},
      {"matern:nu=0.7,l=1.3", [](double u) { return boost::math::quantile(boost::math::students_t_distribution<double>(1.4), u) / 1.3; }},
  };
}

}  // namespace

TEST_CASE("every kernel keeps the contract: Phi(0) = 1, |Phi| <= 1, even, Phi2(d) = Phi(2d), variances in [0, 1]") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  for (const auto& text : all_spectra()) {
    CAPTURE(text);
    const Spectrum s = parse_spectrum(text);
    const int k = dims(s);
    std::vector<double> zero(static_cast<std::size_t>(k), 0.0);
    CHECK(phi(s, zero) == 1.0);
    CHECK(one_minus_phi(s, zero) == 0.0);
    Rng rng(seed, 1);
    for (double scale : {1e-8, 1e-3, 0.3, 1.0, 3.0, 30.0, 1e3}) {
      std::vector<double> lag(static_cast<std::size_t>(k)), neg(lag.size()), twice(lag.size());
      for (std::size_t j = 0; j < lag.size(); ++j) {
        lag[j] = scale * rng.normal();
        neg[j] = -lag[j];
        twice[j] = 2 * lag[j];
      }
      CAPTURE(scale);
      const KernelValues kv = kernel_values(s, lag);
      CHECK(std::abs(kv.phi) <= 1.0);
      CHECK(kv.phi == phi(s, neg));
      CHECK(kv.phi2 == phi(s, twice));
      // psi = 1 - Phi is computed by its own route: agreement to rounding of 1 - Phi (a few eps).
      CHECK(std::abs(kv.psi - (1 - kv.phi)) <= 8e-16);
      CHECK(kv.var_cos >= 0);
      CHECK(kv.var_sin >= 0);
      CHECK(kv.var_cos <= 1);
      CHECK(kv.var_sin <= 1);  // (1 - Phi2)/2: above 1/2 where Phi2 < 0 (sinc, mixtures)
      // Prop 4's per-frequency variances, as printed, away from the origin (no cancellation there).
      if (kv.psi > 1e-3) {
        CHECK(std::abs(kv.var_cos - ((1 + kv.phi2) / 2 - kv.phi * kv.phi)) <= 1e-14);
        CHECK(std::abs(kv.var_sin - (1 - kv.phi2) / 2) <= 1e-15);
      }
    }
  }
}

TEST_CASE("Phi, 1 - Phi and Prop 4's variances match mpmath to 1e-12 relative, down to lag 1e-9") {
  // tests/data/kernel-reference.csv: each family's closed-form Phi at 80 digits and the variances from their
  // definitions (scripts/reference/kernel_reference.py). var_cos is O(Dp^4) for smooth kernels: computed as
  // (1 + Phi2)/2 - Phi^2 in float64 it was 1.7e-2 off at lag 1e-7 (gaussian) and 150 % off at 3.7e-9 (Matern 3.7).
  std::ifstream in(std::string(ROPEKIT_SOURCE_DIR) + "/tests/data/kernel-reference.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  int rows = 0;
  while (std::getline(in, line)) {
    const auto close = line.find('"', 1);
    const std::string text = line.substr(1, close - 1);
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(close + 2));
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() == 5);
    std::vector<double> lag;
    std::stringstream ls(cells[0]);
    for (double v; ls >> v;) lag.push_back(v);
    const Spectrum s = parse_spectrum(text);
    const KernelValues kv = kernel_values(s, lag);
    CAPTURE(text);
    CAPTURE(cells[0]);
    double ref[4];
    for (int i = 0; i < 4; ++i) ref[i] = std::strtod(cells[static_cast<std::size_t>(i) + 1].c_str(), nullptr);
    const double got[] = {kv.phi, kv.psi, kv.var_cos, kv.var_sin};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i);
      // 1e-12 relative (the goal); Phi near a zero of sinc or the mixture's cosine is held to 1e-15 absolute.
      CHECK(std::abs(got[i] - ref[i]) <= 1e-12 * std::abs(ref[i]) + (i == 0 ? 1e-15 : 0.0));
    }
    ++rows;
  }
  CHECK(rows >= 100);
}

TEST_CASE("file spectra: Var[cos u] from the frequencies' own closed forms") {
  // Two frequencies w1, w2 drawn with equal probability: cos u takes cos(d w1) and cos(d w2), so Var[cos u] =
  // (cos(d w1) - cos(d w2))^2 / 4 = sin^2(d (w1 + w2)/2) sin^2(d (w1 - w2)/2), with no cancellation.
  const Spectrum two = parse_frequency_text("0.3\n1.7\n", "two");
  for (double d : {1e-8, 1e-4, 0.5, 3.0}) {
    const double lag[1] = {d};
    const double sp = std::sin(d * 1.0), sm = std::sin(d * 0.7);
    CAPTURE(d);
    CHECK(kernel_values(two, lag).var_cos == doctest::Approx(sp * sp * sm * sm).epsilon(1e-13));
  }
  // One frequency: cos u is not random at all (the sign does not change it), so the variance is exactly 0.
  const Spectrum one = parse_frequency_text("0.9\n", "one");
  for (double d : {1e-8, 0.5, 3.0}) {
    const double lag[1] = {d};
    CHECK(kernel_values(one, lag).var_cos == 0.0);
  }
}

TEST_CASE("finite but extreme parameters: no NaN, inf or wrong number") {
  // A mixture mean or file frequency near the top of the float64 range: the phase mu . Dp overflows at modest lags,
  // and the kernel there has no float64 value; it is refused naming the lag (it printed NaN before).
  for (const char* text : {"mixture:weights=1,mu=1e300,s=1"}) {
    const Spectrum s = parse_spectrum(text);
    const double ok[1] = {1e-10}, bad[1] = {1e10};
    CHECK(std::isfinite(kernel_values(s, ok).phi));
    CHECK_THROWS_AS(kernel_values(s, bad), InputError);
  }
  const Spectrum f = parse_frequency_text("1e300\n", "huge");
  const double bad[1] = {1e10};
  CHECK_THROWS_AS(kernel_values(f, bad), InputError);
  // Beyond 1e300 a frequency or a reciprocal scale leaves float64 when sampled, doubled or tabulated: refused.
  for (const char* text : {"mixture:weights=1,mu=1e308,s=1", "mixture:weights=1,mu=0,s=1e301", "gaussian:sigma=1e-320",
                           "cauchy:b=1e301", "sinc:W=1,1e-305", "matern:nu=2,l=1e-310", "exponential:l=1e305"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_spectrum(text), InputError);
  }
  CHECK_THROWS_AS(parse_frequency_text("1\n1e308\n", "huge"), InputError);
  // A line of separators only is an error naming the line (it became a 1 x 0 matrix that blamed --lags).
  CHECK_THROWS_WITH_AS(parse_frequency_text("1 2\n , ,\n", "sep"), doctest::Contains("line 2"), InputError);
  CHECK_THROWS_WITH_AS(parse_frequency_text(",\n", "sep"), doctest::Contains("line 1 = ',' (must be a row of numbers"),
                       InputError);
  // A component whose Gaussian factor underflows contributes 0 whatever its phase.
  const Spectrum wide = parse_spectrum("mixture:weights=1,1,mu=0,1e200,s=1e200,0");
  const double lag[1] = {1e150};
  CHECK_THROWS_AS(kernel_values(wide, lag), InputError);  // the second component's phase 1e350 overflows
}

TEST_CASE("spellings parse back to the same kernel") {
  for (const auto& text : all_spectra()) {
    CAPTURE(text);
    const Spectrum s = parse_spectrum(text);
    const Spectrum back = parse_spectrum(spelling(s));
    CHECK(spelling(back) == spelling(s));
    std::vector<double> lag(static_cast<std::size_t>(dims(s)), 0.37);
    CHECK(phi(back, lag) == phi(s, lag));
  }
  CHECK(dims(parse_spectrum("sinc:W=1,2,dims=2")) == 2);
  CHECK(dims(parse_spectrum("sinc:W=3,dims=4")) == 4);  // one W broadcast to every dimension
  CHECK(spelling(parse_spectrum("gaussian")) == "gaussian:sigma=1");
}

TEST_CASE("closed-form Phi matches quadrature of the 1-D density's cosine transform") {
  // Ooura's double-exponential Fourier quadrature (Boost.Math) reaches ~1e-14 absolute here; at large
  // lags Phi is far below that, so the comparison is absolute: 5e-14 covers the quadrature's own error
  // (largest seen: 8e-15) with margin, and is far below any formula mistake (which shows at 1e-3).
  for (const auto& text : all_spectra()) {
    const Spectrum s = parse_spectrum(text);
    if (dims(s) != 1) continue;
    for (double d : {0.0, 1e-8, 1e-3, 0.3, 1.0, 3.0, 30.0, 300.0}) {
      CAPTURE(text);
      CAPTURE(d);
      const double lag[1] = {d};
      const double q = phi_by_quadrature_1d(s, d);
      CHECK(std::abs(phi(s, lag) - q) <= 5e-14);
    }
  }
}

TEST_CASE("k-D kernels match quadrature: radial sine transform (k = 3), products and projections (k = 2)") {
  // k = 3, isotropic density p(|w|): Phi(r) = (4 pi / r) int_0^inf p(rho) rho sin(rho r) d rho.
  // This checks the k-dimensional densities of spec section 2 (Matern's Gamma(nu + k/2) normalisation)
  // against the kernels, which do not depend on k.
  boost::math::quadrature::ooura_fourier_sin<double> os;
  for (const char* text : {"gaussian:sigma=2,dims=3", "exponential:l=0.8,dims=3", "matern:nu=1.2,l=1.7,dims=3",
                           "matern:nu=0.6,l=0.9,dims=3"}) {
    const Spectrum s = parse_spectrum(text);
    for (double r : {0.05, 0.4, 1.0, 2.5, 10.0}) {
      CAPTURE(text);
      CAPTURE(r);
      auto f = [&](double rho) {
        const double w[3] = {rho, 0, 0};
        return 4 * M_PI * density(s, w) * rho / r;
      };
      const double q = os.integrate(f, r).first;
      const double lag[3] = {r * 0.6, -r * 0.8, 0.0};
      CHECK(std::abs(phi(s, lag) - q) <= 5e-13);  // 3-D density near rho = 0 costs the sine quadrature ~1e-13
    }
  }
  // k = 2 product families: the product of two 1-D quadratures.
  for (const char* text : {"cauchy:b=0.5,dims=2", "sinc:W=1,3"}) {
    const Spectrum s = parse_spectrum(text);
    const double lag[2] = {0.7, -1.3};
    double q = 1;
    for (int j = 0; j < 2; ++j) {
      const Spectrum factor = std::holds_alternative<spectral::Cauchy>(s)
                                  ? parse_spectrum("cauchy:b=0.5")
                                  : parse_spectrum(j == 0 ? "sinc:W=1" : "sinc:W=3");
      q *= phi_by_quadrature_1d(factor, lag[j]);
    }
    CAPTURE(text);
    CHECK(std::abs(phi(s, lag) - q) <= 5e-14);
  }
  // k = 2 mixture: w . d of component q is the 1-D Gaussian N(+-mu_q . d, d^T S_q d); integrate its cosine.
  {
    const Spectrum s = parse_spectrum("mixture:weights=1,2,mu=1,0,0,2,s=0.3,0.1,0.2,0.4,dims=2");
    const auto& m = std::get<spectral::Mixture>(s);
    const double lag[2] = {0.9, 0.4};
    double q = 0;
    for (int c = 0; c < 2; ++c) {
      const double mean = m.mu(c, 0) * lag[0] + m.mu(c, 1) * lag[1];
      const double sd = std::hypot(m.s(c, 0) * lag[0], m.s(c, 1) * lag[1]);
      const boost::math::normal_distribution<double> n(mean, sd);
      const double Ec = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
          [&](double x) { return boost::math::pdf(n, x) * std::cos(x); }, mean - 40 * sd, mean + 40 * sd, 12, 1e-15);
      q += m.weights[static_cast<std::size_t>(c)] / 3.0 * Ec;
    }
    CHECK(std::abs(phi(s, lag) - q) <= 1e-14);
  }
}

TEST_CASE("make_quantile agrees with Boost.Math's quantiles") {
  for (const auto& [text, reference] : reference_quantiles()) {
    const auto Q = make_quantile(parse_spectrum(text));
    for (double u : {1e-12, 0.01, 0.25, 0.5, 0.7, 0.99, 1 - 1e-12}) {
      const auto text_ = text;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
      CAPTURE(text_);
      CAPTURE(u);
      const double ref = reference(u);
      CHECK(std::abs(Q(u) - ref) <= 1e-12 * std::max(1.0, std::abs(ref)));  // a few ulps of a quantile
    }
  }
  // Mixture: the quantile inverts the CDF built from Boost's normal CDF.
  const Spectrum mix = parse_spectrum("mixture:weights=0.7,0.3,mu=0.5,3,s=0.2,0.6");
  const auto Q = make_quantile(mix);
  for (double u : {0.001, 0.2, 0.5, 0.8, 0.999}) {
    const double x = Q(u);
    double cdf = 0;
    for (auto [w, mu, sd] : {std::tuple{0.7, 0.5, 0.2}, std::tuple{0.3, 3.0, 0.6}})
      cdf += w * 0.5 * (boost::math::cdf(boost::math::normal_distribution<double>(mu, sd), x) +
                        boost::math::cdf(boost::math::normal_distribution<double>(-mu, sd), x));
    CAPTURE(u);
    CHECK(cdf == doctest::Approx(u).epsilon(1e-12));
  }
  CHECK_THROWS_AS(make_quantile(parse_spectrum("gaussian:sigma=1,dims=2")), InputError);
}

namespace {

// Chi-square goodness of fit of x against a CDF on `bins` equiprobable bins (edges from the reference
// quantile); returns {statistic, bound at false-alarm rate kAlpha}.
template <class Quantile>
std::pair<double, double> chi_square(const std::vector<double>& x, Quantile reference_quantile, int bins) {
  std::vector<double> edges;
  for (int b = 1; b < bins; ++b) edges.push_back(reference_quantile(static_cast<double>(b) / bins));
  std::vector<double> count(static_cast<std::size_t>(bins), 0.0);
  for (double v : x) count[static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin())] += 1;
  const double expected = static_cast<double>(x.size()) / bins;
  double stat = 0;
  for (double c : count) stat += (c - expected) * (c - expected) / expected;
  const double bound =
      boost::math::quantile(boost::math::complement(boost::math::chi_squared_distribution<double>(bins - 1), kAlpha));
  return {stat, bound};
}

std::vector<double> draw(const Spectrum& s, std::size_t n, std::uint64_t seed) {
  Rng rng(seed, 42);
  std::vector<double> w(n * static_cast<std::size_t>(dims(s)));
  sample(s, rng, n, w.data());
  return w;
}

}  // namespace

TEST_CASE("1-D samplers pass chi-square goodness of fit against Boost's distributions (false-alarm rate 1e-6)") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const std::size_t n = 200000;
  auto cases = reference_quantiles();
  cases.insert(cases.end(), {
      {"matern:nu=3.3,l=0.8", [](double u) { return boost::math::quantile(boost::math::students_t_distribution<double>(6.6), u) / 0.8; }},
      {"matern:nu=0.06,l=1", [](double u) { return boost::math::quantile(boost::math::students_t_distribution<double>(0.12), u); }},
  });
  for (const auto& [text, reference] : cases) {
    const auto text_ = text;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(text_);
    const auto x = draw(parse_spectrum(text), n, seed);
    const auto [stat, bound] = chi_square(x, reference, 64);
    const auto bound_ = bound;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(bound_);
    CHECK(stat <= bound);
    CHECK(std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }));
  }
  // The power of this check: a sampler with the reciprocal scale fails it.
  const auto wrong = draw(parse_spectrum("cauchy:b=0.5"), n, seed);
  const auto [stat, bound] = chi_square(wrong, [](double u) { return boost::math::quantile(boost::math::laplace_distribution<double>(0, 0.5), u); }, 64);
  CHECK(stat > bound);
}

TEST_CASE("sampler moments: mean 0 and variance E[w^2] within the 1e-6 normal bound") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const std::size_t n = 200000;
  // E[w^2] of each finite-variance 1-D family: 1/sigma^2, 2/b^2 (Laplace(0, 1/b)), W^2/3,
  // 2nu/(2nu - 2)/l^2 (Student-t, 2nu > 2), sum_q w_q (mu_q^2 + s_q^2).
  const std::vector<std::pair<std::string, double>> cases = {
      {"gaussian:sigma=0.7", 1 / 0.49}, {"cauchy:b=2", 0.5}, {"sinc:W=2", 4.0 / 3},
      {"matern:nu=3.3,l=0.8", 6.6 / 4.6 / 0.64}, {"mixture:weights=0.7,0.3,mu=0.5,3,s=0.2,0.6", 0.7 * 0.29 + 0.3 * 9.36},
  };
  const double z = z_bound();
  for (const auto& [text, second_moment] : cases) {
    const auto text_ = text;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(text_);
    const auto x = draw(parse_spectrum(text), n, seed);
    double m1 = 0, m2 = 0, m4 = 0;
    for (double v : x) {
      m1 += v;
      m2 += v * v;
      m4 += v * v * v * v;
    }
    m1 /= n;
    m2 /= n;
    m4 /= n;
    CHECK(std::abs(m1) <= z * std::sqrt(m2 / n));
    CHECK(std::abs(m2 - second_moment) <= z * std::sqrt((m4 - m2 * m2) / n));
  }
}

TEST_CASE("k-D samplers: |w|^2 has the right law (chi-square, F) and the coordinates the right marginal") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const std::size_t n = 100000;
  struct Case {
    std::string text;
    std::function<double(double)> norm2_quantile;  // quantile of |w|^2 (scaled as below)
    double scale;                                   // statistic = |w|^2 * scale
  };
  const std::vector<Case> cases = {
      {"gaussian:sigma=2,dims=3", [](double u) { return boost::math::quantile(boost::math::chi_squared_distribution<double>(3), u); }, 4.0},
      // multivariate t with nu dof: |w|^2 l^2 / k ~ F(k, nu)
      {"exponential:l=0.8,dims=3", [](double u) { return boost::math::quantile(boost::math::fisher_f_distribution<double>(3, 1), u); }, 0.64 / 3},
      {"matern:nu=1.2,l=2,dims=2", [](double u) { return boost::math::quantile(boost::math::fisher_f_distribution<double>(2, 2.4), u); }, 4.0 / 2},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const Spectrum s = parse_spectrum(c.text);
    const auto w = draw(s, n, seed);
    const auto k = static_cast<std::size_t>(dims(s));
    std::vector<double> stat(n);
    for (std::size_t i = 0; i < n; ++i) {
      double r2 = 0;
      for (std::size_t j = 0; j < k; ++j) r2 += w[j * n + i] * w[j * n + i];
      stat[i] = r2 * c.scale;
    }
    auto [chi, bound] = chi_square(stat, c.norm2_quantile, 50);
    CHECK(chi <= bound);
  }
  // Cauchy k-D: independent Laplace coordinates; sinc k-D: independent uniforms with their own W.
  {
    const Spectrum s = parse_spectrum("sinc:W=1,3");
    const auto w = draw(s, n, seed);
    for (int j = 0; j < 2; ++j) {
      const double W = j == 0 ? 1 : 3;
      std::vector<double> x(w.begin() + static_cast<long>(j * n), w.begin() + static_cast<long>((j + 1) * n));
      auto [chi, bound] = chi_square(x, [&](double u) { return W * (2 * u - 1); }, 50);
      CHECK(chi <= bound);
    }
  }
}

TEST_CASE("a frequency file's draws: each listed frequency with either sign, equally likely") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Spectrum s = parse_frequency_text("# RoPE-like\n1\n0.25\n\n0.0625\r\n", "inline");
  const std::size_t n = 60000;
  const auto w = draw(s, n, seed);
  const std::vector<double> values = {-1, -0.25, -0.0625, 0.0625, 0.25, 1};
  std::vector<double> count(values.size(), 0);
  for (double v : w) {
    const auto it = std::find(values.begin(), values.end(), v);
    REQUIRE(it != values.end());
    count[static_cast<std::size_t>(it - values.begin())] += 1;
  }
  double stat = 0;
  for (double c : count) stat += (c - n / 6.0) * (c - n / 6.0) / (n / 6.0);
  CHECK(stat <= boost::math::quantile(boost::math::complement(boost::math::chi_squared_distribution<double>(5), kAlpha)));
}

TEST_CASE("bad spectra are InputErrors naming the value and the constraint") {
  const std::vector<std::string> bad = {
      "lorentzian:b=1", "gaussian:sigma=0", "gaussian:sigma=-1", "gaussian:sigma=nan", "gaussian:sigma=inf",
      "cauchy:b=0", "exponential:l=-2", "sinc:W=0", "sinc:W=1,-1", "sinc:W=1,2,dims=3", "matern:nu=0,l=1",
      "matern:nu=-0.5", "matern:nu=nan", "matern:l=0", "gaussian:dims=0", "gaussian:dims=2000", "gaussian:sigma=1,bogus=2",
      "mixture:weights=1,mu=1", "mixture:weights=-1,mu=1,s=1", "mixture:weights=1,mu=1,2,s=1", "mixture:weights=1,mu=1,s=-1",
      "file:", "gaussian:sigma", "gaussian:sigma=abc"};
  for (const auto& text : bad) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_spectrum(text), InputError);
  }
  try {
    parse_spectrum("gaussian:sigma=-1");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "spectrum 'gaussian:sigma=-1': sigma = -1 (must be finite and > 0)");
  }
  // Sampling needs nu >= 0.05 (smaller nu overflows float64 frequencies); the kernel does not.
  const Spectrum tiny = parse_spectrum("matern:nu=0.01");
  CHECK_NOTHROW(check_samplable(parse_spectrum("matern:nu=0.05")));
  CHECK_THROWS_AS(check_samplable(tiny), InputError);
  const double lag[1] = {1.0};
  CHECK(phi(tiny, lag) > 0);
  // Lags of the wrong dimension or not finite.
  const double two[2] = {1, 2};
  CHECK_THROWS_AS(phi(parse_spectrum("gaussian"), two), InputError);
  const double nan[1] = {std::nan("")};
  CHECK_THROWS_AS(phi(parse_spectrum("gaussian"), nan), InputError);
}

TEST_CASE("frequency files: empty, ragged, non-numeric or non-finite are errors naming the line") {
  CHECK_THROWS_WITH_AS(parse_frequency_text("", "f.txt"), doctest::Contains("rows = 0 (must be at least one row"), InputError);
  CHECK_THROWS_WITH_AS(parse_frequency_text("# only a comment\n\n", "f.txt"), doctest::Contains("rows = 0 (must be at least one row"), InputError);
  CHECK_THROWS_WITH_AS(parse_frequency_text("1 2\n3\n", "f.txt"), doctest::Contains("line 2"), InputError);
  CHECK_THROWS_WITH_AS(parse_frequency_text("1,x\n", "f.txt"), doctest::Contains("'x'"), InputError);
  CHECK_THROWS_WITH_AS(parse_frequency_text("1\nnan\n", "f.txt"), doctest::Contains("line 2"), InputError);
  CHECK_THROWS_AS(read_frequency_file("/nonexistent/freqs.txt"), InputError);
  const auto e = parse_frequency_text("1, 2\n3\t4\n", "f.txt");
  CHECK(e.w.rows() == 2);
  CHECK(e.w.cols() == 2);
  CHECK(e.w(1, 0) == 3);
  // Phi of a file spectrum: the average of cos(Dp . w_j).
  const double lag[2] = {0.5, -0.25};
  CHECK(phi(Spectrum(e), lag) == doctest::Approx((std::cos(0.5 - 0.5) + std::cos(1.5 - 1.0)) / 2).epsilon(1e-15));
}

TEST_CASE("a mixture with a zero width has no density") {
  // Found by the spectrum fuzzer: s = 0 along an axis is a point mass there, and density() returned NaN.
  const Spectrum s = parse_spectrum("mixture:weights=1,2,mu=0,1,2,3,s=0.5,0,dims=2");
  const std::vector<double> w{0.5, 0.5};
  CHECK_THROWS_AS(density(s, w), InputError);
  const double lag[2] = {0.3, 0.4};  // the kernel is fine: the point mass's cosine is exact
  CHECK(std::isfinite(phi(s, lag)));
}

TEST_CASE("Matern density at huge nu is the Gaussian density") {
  // Found by the spectrum fuzzer: at nu = 3.5e307, 2 nu / l^2 and lgamma(nu) overflowed and the density was NaN. The
  // Student-t density with 2 nu dof tends to the Gaussian N(0, l^-2 I): relative gap O(k^2/nu + |w l|^4/nu).
  for (std::string nu : {"1e9", "1e20", "3.5e307"}) {
    const Spectrum m = parse_spectrum("matern:nu=" + nu + ",l=2,dims=3");
    const Spectrum g = parse_spectrum("gaussian:sigma=2,dims=3");
    const std::vector<double> w{0.5, -0.25, 0.1};
    CAPTURE(nu);
    // 1e-13 covers rounding of the exponent's terms; at nu = 1e9 the O(1/nu) gap (~1e-9) dominates.
    CHECK(density(m, w) == doctest::Approx(density(g, w)).epsilon(nu == "1e9" ? 1e-8 : 1e-13));
  }
}

TEST_CASE("every family: named by its own info, listed once, and its scale key and derivative agree with Phi") {
  // Each alternative of Spectrum appears in all_spectra() (the file family: by a frequency text).
  std::vector<bool> covered(std::variant_size_v<Spectrum>, false);
  covered[Spectrum(parse_frequency_text("0.5\n1.5\n", "f.txt")).index()] = true;
  for (const auto& text : all_spectra()) {
    CAPTURE(text);
    const Spectrum s = parse_spectrum(text);
    covered[s.index()] = true;
    CHECK(family_name(s) == text.substr(0, text.find(':')));
    CHECK(std::string(spectrum_families()[s.index()].spelling).rfind(family_name(s) + ":", 0) == 0);
    CHECK(default_spectrum(family_name(s)).value().index() == s.index());
    const auto scale = spectrum_scale(s);
    if (!scale) continue;
    CHECK(dims(s) == 1);
    CHECK(spelling(spectrum_with_scale(s, scale->value)) == spelling(s));
    const Spectrum doubled = spectrum_with_scale(s, 2 * scale->value);
    CHECK(spectrum_scale(doubled)->value == 2 * scale->value);
    // dPhi/d(scale) against a central difference where the family gives it in closed form.
    for (double x : {0.3, 1.7}) {
      const auto d = spectrum_scale_derivative(s, x);
      if (!d) continue;
      const double h = 1e-6 * scale->value, lag[1] = {x};
      const double fd = (phi(spectrum_with_scale(s, scale->value + h), lag) - phi(spectrum_with_scale(s, scale->value - h), lag)) / (2 * h);
      CAPTURE(x);
      CHECK(*d == doctest::Approx(fd).epsilon(1e-6));
    }
  }
  for (std::size_t i = 0; i < covered.size(); ++i) {
    CAPTURE(i);
    CHECK(covered[i]);
  }
  CHECK(spectrum_families().size() == std::variant_size_v<Spectrum>);
  CHECK(fitted_family_names() == "gaussian, cauchy, exponential, sinc, matern");
  CHECK_THROWS_WITH_AS(parse_spectrum("lorentzian:b=1"),
                       "spectrum = 'lorentzian' (must be one of gaussian, cauchy, exponential, sinc, matern, mixture, file:PATH)",
                       InputError);
}
