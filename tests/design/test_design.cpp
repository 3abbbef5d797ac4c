// Inverse design (design/design.hpp; RF-RoPE Corollary 3, Bochner): the interpolant transform against a direct
// quadrature written here, round trips of tables of closed-form kernels back to their densities (closed forms written
// here, never taken from the library's output), the Fejer certificate (box refuted; slowly decaying and pure-cosine
// PD kernels pass although their untapered transforms ripple negative), the cosine sums' accuracy at N = 1e5, the
// D^(-1/2) law of iid designs (faster for quantile designs), RoPE's kernel designed back onto RoPE's frequencies,
// sampling conventions and the table parser's refusals; line spectra of rotary encodings (atoms against the
// encoding's kernel and the masses written here, designs that are exactly YaRN's frequencies, iid and antithetic
// designs against Prop 4 and a Monte Carlo estimate of their exact variance).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include "ropekit/core/rng.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/design/design.hpp"
#include "encoding_spellings.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = std::numbers::pi;

KernelGrid table_of(double h, int n, const std::function<double(double)>& phi) {
  KernelGrid t;
  t.step = h;
  t.phi.resize(n);
  for (int k = 0; k < n; ++k) t.phi[k] = phi(k * h);
  return t;
}

// The Matern density in 1-D (spec rf-rope.md section 2 with k = 1), written out here:
// p(w) = Gamma(nu + 1/2)/(sqrt(pi) Gamma(nu)) (2 nu/l^2)^nu (2 nu/l^2 + w^2)^-(nu + 1/2).
double matern_density(double nu, double l, double w) {
  const double c = 2 * nu / (l * l);
  return boost::math::tgamma(nu + 0.5) / (std::sqrt(kPi) * boost::math::tgamma(nu)) * std::pow(c, nu) *
         std::pow(c + w * w, -(nu + 0.5));
}

// 2 int_0^{w_max} |p - p_true| dw (trapezoid on the estimate's grid) + the closed form's mass beyond w_max.
double l1_error(const DensityEstimate& d, const std::function<double(double)>& p_true, double tail_mass) {
  const Eigen::Index M = d.w.size();
  double sum = 0;
  for (Eigen::Index j = 0; j < M; ++j)
    sum += (j == 0 || j == M - 1 ? 0.5 : 1.0) * std::fabs(d.p[j] - p_true(d.w[j]));
  return 2 * sum * d.w_max / static_cast<double>(M - 1) + tail_mass;
}

// Least-squares slope of log y against log x.
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += std::log(x[i]), my += std::log(y[i]);
  mx /= static_cast<double>(x.size()), my /= static_cast<double>(x.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (std::log(x[i]) - mx) * (std::log(y[i]) - my);
    sxx += (std::log(x[i]) - mx) * (std::log(x[i]) - mx);
  }
  return sxy / sxx;
}

double rms(const Eigen::VectorXd& e) { return std::sqrt(e.squaredNorm() / static_cast<double>(e.size())); }

}  // namespace

TEST_CASE("the density is the cosine transform of the piecewise-linear interpolant (direct quadrature)") {
  // p(w) = (1/pi) int_0^X f(x) cos(w x) dx for the even interpolant f of Phi_k (f = 0 beyond X = (N-1) h... up to
  // N h, where the last hat ends). Simpson's rule with 2000 panels per cell of a smooth integrand: ~1e-13.
  const KernelGrid t = [] {
    KernelGrid k;
    k.step = 0.7;
    k.phi.resize(5);
    k.phi << 1, 0.6, -0.2, 0.3, 0.1;  // any numbers: the formula is the interpolant's transform, PD or not
    return k;
  }();
  const DensityEstimate d = estimate_density(t, 33);
  const int N = 5;
  auto f = [&](double x) {  // the interpolant, Phi_N = 0 appended
    const double s = x / t.step;
    const int k = static_cast<int>(std::floor(s));
    if (k >= N) return 0.0;
    const double a = t.phi[k], b = k + 1 < N ? t.phi[k + 1] : 0.0;
    return a + (s - k) * (b - a);
  };
  for (int j : {0, 1, 7, 16, 31, 32}) {
    const double w = d.w[j];
    double sum = 0;
    const int cells = N, panels = 2000;
    for (int c = 0; c < cells; ++c) {
      const double x0 = c * t.step, dx = t.step / panels;
      for (int i = 0; i <= panels; ++i) {
        const double wt = (i == 0 || i == panels) ? 1 : (i % 2 ? 4 : 2);
        sum += wt * f(x0 + i * dx * (1 - 1e-15)) * std::cos(w * (x0 + i * dx)) * dx / 3;
      }
    }
    CAPTURE(j);
    CHECK(d.p[j] == doctest::Approx(sum / kPi).epsilon(1e-9));
  }
  CHECK(d.w[32] == doctest::Approx(kPi / 0.7).epsilon(1e-15));  // w_max = pi/h
}

TEST_CASE("round trip: tables of Gaussian, Cauchy and Matern-2.5 kernels give their densities within 1e-3 in L1") {
  // The interpolant's transform is sinc^2(wh/2) sum_m p(w + 2 pi m/h) (Poisson): its L1 error is about
  // h^2 E[w^2]/12 (the sinc^2 factor) plus the aliases and the table's truncation at X. Each table below keeps
  // h^2 E[w^2]/12 <= 2e-4 and truncates where the kernel's tail transform is below 1e-4.
  SUBCASE("Gaussian sigma = 2: E[w^2] = 1/4, h = 0.1 (2e-4); X = 20 = 10 sigma (e^-50)") {
    const double s = 2;
    const DensityEstimate d = estimate_density(table_of(0.1, 201, [&](double x) { return std::exp(-x * x / (2 * s * s)); }), 4097);
    auto p = [&](double w) { return s / std::sqrt(2 * kPi) * std::exp(-s * s * w * w / 2); };
    const double tail = std::erfc(s * d.w_max / std::sqrt(2.0));
    CHECK(l1_error(d, p, tail) < 1e-3);
    CHECK(d.integral == doctest::Approx(1).epsilon(1e-3));
    CHECK(d.positive_definite);
  }
  SUBCASE("Cauchy b = 1: density (b/2) e^{-b|w|}, E[w^2] = 2/b^2, h = 0.025 (1e-4); X = 200 (tail ~ 1/(pi X^2))") {
    const double b = 1;
    const DensityEstimate d =
        estimate_density(table_of(0.025, 8001, [&](double x) { return 1 / (1 + (x / b) * (x / b)); }), 16001);
    auto p = [&](double w) { return b / 2 * std::exp(-b * std::fabs(w)); };
    CHECK(l1_error(d, p, std::exp(-b * d.w_max)) < 1e-3);
    CHECK(d.positive_definite);
  }
  SUBCASE("Matern nu = 5/2, l = 3: Student-t density, E[w^2] = 5/(3 l^2), h = 0.25 (1e-3 x 0.6); X = 90 = 30 l") {
    const double nu = 2.5, l = 3;
    // The density integrates to 1: w l ~ Student-t with 2 nu dof (mass beyond W: 2 (1 - T(W l))), and numerically.
    boost::math::students_t_distribution<double> T(2 * nu);
    double mass = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {  // int_0^inf over w = tan(theta), theta in (0, pi/2): midpoint rule
      const double th = (i + 0.5) * (kPi / 2) / n, w = std::tan(th);
      mass += 2 * matern_density(nu, l, w) * (1 + w * w) * (kPi / 2) / n;
    }
    CHECK(mass == doctest::Approx(1).epsilon(1e-9));
    auto phi = [&](double x) {
      const double r = std::sqrt(5.0) * x / l;
      return (1 + r + r * r / 3) * std::exp(-r);
    };
    const DensityEstimate d = estimate_density(table_of(0.25, 361, phi), 4097);
    auto p = [&](double w) { return matern_density(nu, l, w); };
    const double tail = 2 * boost::math::cdf(boost::math::complement(T, d.w_max * l));
    CHECK(l1_error(d, p, tail) < 1e-3);
    CHECK(d.positive_definite);
  }
}

TEST_CASE("Fejer certificate: a box is not positive definite; slowly decaying and pure-cosine PD kernels pass") {
  SUBCASE("box Phi = 1 for |x| <= 10, 0 beyond (a table to 40): negative mass far above the tolerance") {
    const DensityEstimate d = estimate_density(table_of(0.5, 81, [](double x) { return x <= 10 ? 1.0 : 0.0; }), 4097);
    CAPTURE(d.negative_mass);
    CAPTURE(d.tolerance);
    CHECK_FALSE(d.positive_definite);
    CHECK(d.negative_mass > 1e-2);            // the box's transform is a Dirichlet kernel: O(1) negative lobes
    CHECK(d.negative_mass > 1e6 * d.tolerance);
  }
  // The untapered bracket, evaluated here directly, at the estimate's grid points: its most negative value.
  auto untapered_min = [](const KernelGrid& t, const DensityEstimate& d) {
    double lo = 0;
    for (Eigen::Index j = 0; j < d.w.size(); j += 7) {
      double s = t.phi[0];
      for (Eigen::Index k = 1; k < t.phi.size(); ++k) s += 2 * t.phi[k] * std::cos(d.w[j] * t.step * k);
      lo = std::min(lo, s);
    }
    return lo;
  };
  SUBCASE("Cauchy kernel 1/(1 + x^2) truncated at 50: ripples in the plain transform, none after the taper") {
    // The cut tail's transform, ~ sin(wX)/(pi w X^2) ~ 1e-5 at w = 10, exceeds the density e^{-w}/2 beyond w ~ 9,
    // inside the band [0, pi/h] = [0, 31].
    const KernelGrid t = table_of(0.1, 501, [](double x) { return 1 / (1 + x * x); });
    const DensityEstimate d = estimate_density(t, 4097);
    CAPTURE(d.negative_mass);
    CAPTURE(d.negative_mass_untapered);
    CAPTURE(d.tolerance);
    CHECK(untapered_min(t, d) < -1e-4);
    CHECK(d.negative_mass_untapered > 1e3 * d.tolerance);
    CHECK(d.negative_mass <= d.tolerance);
    CHECK(d.positive_definite);
  }
  SUBCASE("YaRN's kernel (a weighted sum of cosines) on 0..4096: positive definite") {
    const Encoding e = parse_encoding("rope:dim=64,base=1e4,scaling=yarn(factor=32,orig=4096)");
    Lags lags(4097, 1);
    for (int k = 0; k < 4097; ++k) lags(k, 0) = k;
    KernelGrid t;
    t.step = 1;
    t.phi = kernel(e, lags);
    const DensityEstimate d = estimate_density(t, 8193);
    CAPTURE(d.negative_mass);
    CAPTURE(d.tolerance);
    CHECK(untapered_min(t, d) < -1);  // Dirichlet side lobes of the 32 lines
    CHECK(d.positive_definite);
  }
}

TEST_CASE("cosine sums stay accurate at N = 1e5 (exact angle reduction, no recurrence error growth)") {
  // A slowly decaying table (S = |Phi_0| + 2 sum |Phi_k| ~ 2 ln N... here Phi_k = 1/(1 + k/10)), N = 1e5, M = 129:
  // the estimate against long-double sums with the angle reduced exactly in integers, at every grid point.
  const int N = 100000;
  const KernelGrid t = table_of(1, N, [](double x) { return 1 / (1 + x / 10); });
  const std::int64_t M = 129, P = 2 * (M - 1);
  const DensityEstimate d = estimate_density(t, M);
  double S = 0;
  for (int k = 0; k < N; ++k) S += (k ? 2 : 1) * std::fabs(t.phi[k]);
  double worst = 0;
  for (std::int64_t j = 0; j < M; ++j) {
    long double s = 0;
    for (std::int64_t k = 0; k < N; ++k)
      s += (k ? 2.0L : 1.0L) * t.phi[k] * std::cos(std::numbers::pi_v<long double> * ((j * k) % P) / (M - 1));
    const double th = kPi * j / (M - 1), sinc = j ? std::sin(th / 2) / (th / 2) : 1.0;
    const double want = static_cast<double>(s) * t.step / (2 * kPi) * sinc * sinc;
    worst = std::max(worst, std::fabs(d.p[j] - want) / (t.step / (2 * kPi) * S * kEps));
  }
  CAPTURE(worst);  // in units of eps S h/2pi; a random walk of N roundings gives ~sqrt(N) = 316
  CHECK(worst < 10 * std::sqrt(static_cast<double>(N)));
  CHECK(worst * kEps * S * t.step / (2 * kPi) < d.tolerance);
}

TEST_CASE("an iid design's realised-kernel error falls as D^(-1/2), a quantile design's faster") {
  // Gaussian kernel sigma = 2 tabulated on 0..20 step 0.05 (its density estimate is ~1e-4 from the true one, far below
  // the errors measured); RMS over the table's lags; iid: the mean over 20 seeds.
  const KernelGrid t = table_of(0.05, 401, [](double x) { return std::exp(-x * x / 8); });
  const DensityEstimate d = estimate_density(t, 4097);
  const MagnitudeDistribution m = magnitude_distribution(d.w, d.p);
  Eigen::VectorXd lags(t.phi.size());
  for (Eigen::Index k = 0; k < lags.size(); ++k) lags[k] = k * t.step;
  const std::uint64_t seed = test_seed(20240601);
  CAPTURE(seed);
  std::vector<double> Ds = {16, 64, 256, 1024}, iid, quant;
  for (double D : Ds) {
    double sum = 0;
    for (int r = 0; r < 20; ++r) {
      const Eigen::VectorXd w = design_frequencies(m, static_cast<int>(D), DesignSampling::iid, seed + r);
      sum += rms(realised_kernel(w, lags) - t.phi);
    }
    iid.push_back(sum / 20);
    quant.push_back(rms(realised_kernel(design_frequencies(m, static_cast<int>(D), DesignSampling::quantile, 0), lags) - t.phi));
  }
  const double s_iid = loglog_slope(Ds, iid), s_q = loglog_slope(Ds, quant);
  CAPTURE(s_iid);
  CAPTURE(s_q);
  CHECK(s_iid >= -0.6);
  CHECK(s_iid <= -0.4);
  CHECK(s_q < -0.75);
}

TEST_CASE("kernel of rope:dim=8 designs frequencies back at RoPE's 1, 0.1, 0.01, 0.001 (Fejer density)") {
  // Phi = (1/4) sum_i cos(theta_i x) on lags 0..16384 = X: p_F is a sum of Fejer kernels of half-width 2 pi/X
  // (4 grid cells at M = 2(N-1)+1) at +-theta_i, >= 0, with ~90% of each line's mass in its main lobe.
  const Encoding e = parse_encoding("rope:dim=8,base=1e4");
  const int N = 16385;
  Lags lags(N, 1);
  for (int k = 0; k < N; ++k) lags(k, 0) = k;
  KernelGrid t;
  t.step = 1;
  t.phi = kernel(e, lags);
  const DensityEstimate d = estimate_density(t, 2 * (N - 1) + 1);
  CHECK(d.positive_definite);
  const double cell = d.w_max / static_cast<double>(d.w.size() - 1);
  const double theta[4] = {1, 0.1, 0.01, 0.001};
  auto cells_away = [&](const Eigen::VectorXd& w, double cells) {
    int n = 0;
    for (Eigen::Index i = 0; i < w.size(); ++i) {
      double dist = INFINITY;
      for (double th : theta) dist = std::min(dist, std::fabs(w[i] - th));
      n += dist <= cells * cell;
    }
    return n;
  };
  const Eigen::VectorXd w = design_frequencies(magnitude_distribution(d.w, d.p_fejer), 64, DesignSampling::quantile, 0);
  CHECK(cells_away(w, 4) >= 0.85 * 64);  // main lobes
  CHECK(cells_away(w, 40) == 64);        // the outermost quantiles, in the 1/theta^2 tails, within 10 lobes
  // Its realised kernel is the tapered Phi(x)(1 - x/X) (the Fejer density's kernel): small error on 0..4096.
  Eigen::VectorXd x(4097), tapered(4097);
  for (int k = 0; k < 4097; ++k) x[k] = k, tapered[k] = t.phi[k] * (1 - k / static_cast<double>(N));
  const Eigen::VectorXd r = realised_kernel(w, x);
  CAPTURE((r - tapered).cwiseAbs().maxCoeff());
  CAPTURE(rms(r - t.phi.head(4097)));
  CHECK((r - tapered).cwiseAbs().maxCoeff() < 0.08);
  CHECK(rms(r - t.phi.head(4097)) < 0.08);  // against Phi itself: the taper's bias (<= 1/4 at x = 4096) included
  // The untapered density clips the Dirichlet side lobes (negative mass ~1): fewer frequencies on the lines.
  const Eigen::VectorXd v = design_frequencies(magnitude_distribution(d.w, d.p), 64, DesignSampling::quantile, 0);
  CHECK(d.negative_mass_untapered > 0.5);
  CHECK(cells_away(v, 4) < 0.75 * 64);
}

TEST_CASE("sampling: quantile grid, reproducible seeded draws, antithetic pairs U and 1 - U") {
  // |w| uniform on [0, 2]: p = 1/4 on [0, 2] (2 p integrates to 1), so Q(u) = 2u exactly (linear CDF).
  const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(101, 0, 2);
  const Eigen::VectorXd p = Eigen::VectorXd::Constant(101, 0.25);
  const MagnitudeDistribution m = magnitude_distribution(w, p);
  CHECK(m.mass == doctest::Approx(1).epsilon(1e-14));
  const Eigen::VectorXd q = design_frequencies(m, 4, DesignSampling::quantile, 0);
  for (int i = 0; i < 4; ++i) CHECK(q[i] == doctest::Approx(2 * (i + 0.5) / 4).epsilon(1e-13));
  const std::uint64_t seed = test_seed(7);
  const Eigen::VectorXd a = design_frequencies(m, 9, DesignSampling::iid, seed);
  CHECK(a == design_frequencies(m, 9, DesignSampling::iid, seed));
  Rng rng(seed, kStreamDesign, 0);
  for (int i = 0; i < 9; ++i) CHECK(a[i] == doctest::Approx(2 * rng.uniform()).epsilon(1e-13));
  const Eigen::VectorXd b = design_frequencies(m, 9, DesignSampling::antithetic, seed);
  for (int i = 0; i + 1 < 9; i += 2) CHECK(b[i] + b[i + 1] == doctest::Approx(2).epsilon(1e-13));  // Q(U) + Q(1-U)
  CHECK(b[0] == a[0]);  // the same stream: U_0 first
  // Never 0, even at the smallest uniform: u = 2^-54 gives 2^-53, positive.
  CHECK(quantile(m, 0x1p-54) > 0);
  CHECK_THROWS_AS(magnitude_distribution(w, Eigen::VectorXd::Constant(101, -1)), InputError);
}

TEST_CASE("antithetic variance: below iid's at small lags and equal to a Monte Carlo estimate") {
  // Gaussian sigma = 1 as |w| on [0, 8]; D = 8; 4000 seeded designs: the sample variance of the realised kernel at each
  // lag within 6 standard errors of the quadrature (sd of a variance estimate ~ var sqrt(2/(n-1)) for near-normal
  // means of 8 bounded terms; 6 sigma: false alarms ~1e-9 per lag).
  const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(4001, 0, 8);
  Eigen::VectorXd p(w.size());
  for (Eigen::Index j = 0; j < w.size(); ++j) p[j] = std::exp(-w[j] * w[j] / 2) / std::sqrt(2 * kPi);
  const MagnitudeDistribution m = magnitude_distribution(w, p);
  Eigen::VectorXd lags(3);
  lags << 0.3, 1, 3;
  const Eigen::VectorXd v = antithetic_design_variance(m, lags, 8);
  const int n = 4000;
  const std::uint64_t seed = test_seed(99);
  CAPTURE(seed);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(3), sum2 = Eigen::VectorXd::Zero(3);
  for (int r = 0; r < n; ++r) {
    const Eigen::VectorXd k = realised_kernel(design_frequencies(m, 8, DesignSampling::antithetic, seed + r), lags);
    sum += k;
    sum2 += k.cwiseProduct(k);
  }
  for (int i = 0; i < 3; ++i) {
    const double mean = sum[i] / n, var = (sum2[i] - n * mean * mean) / (n - 1);
    const double phi = std::exp(-lags[i] * lags[i] / 2), phi2 = std::exp(-2 * lags[i] * lags[i]);
    CAPTURE(lags[i]);
    CAPTURE(var);
    CAPTURE(v[i]);
    CHECK(std::fabs(var - v[i]) <= 6 * v[i] * std::sqrt(2.0 / (n - 1)) + 1e-12);
    if (lags[i] < 1.5) CHECK(v[i] < iid_design_variance(phi, phi2, 8));  // the pair cancels cos's linear trend
  }
}

TEST_CASE("kernel_grid: a good table, and every refusal names the value and the constraint") {
  auto grid_of = [](const std::string& text) {
    return kernel_grid(parse_kernel_table(text, "t.csv", "ropekit design: --kernel"), "ropekit design");
  };
  const KernelGrid t = grid_of("lag,value\n0,1\n0.5, 0.8\n1,0.3\n");
  CHECK(t.step == 0.5);
  CHECK(t.phi.size() == 3);
  CHECK(t.phi[1] == 0.8);
  auto refused = [&](const std::string& text, const std::string& expect) {
    CAPTURE(text);
    try {
      (void)grid_of(text);
      FAIL("accepted");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.rfind("ropekit design", 0) == 0);
      CHECK(what.find(expect) != std::string::npos);
    }
  };
  // The reader's refusals (targets/kernel_table), then the grid's.
  refused("", "header = none (must be lag,value");
  refused("lag,value\n", "rows = 0 (must be at least one");
  refused("x,y\n0,1\n", "(must be lag,value, or a table with a lag column");
  refused("lag,value\n0,1\n1,nan\n", "line 3: value = 'nan' (must be a finite number)");
  refused("lag,value\n0,1\n1,abc\n", "a finite number");
  refused("lag,value\n0,1\n2,0.5\n1,0.2\n", "strictly increasing");
  refused("lag,value\n0,1,2\n", "(must be 2 comma-separated fields, as the header: lag,value)");
  refused("lag,value\n1,1\n2,0.5\n", "data:t.csv = first lag 1 (must be 0");
  refused("lag,value\n0,0.9\n1,0.5\n", "Phi(0) 0.9 (must be 1 to within 1e-09");
  refused("lag,value\n0,1\n1,0.5\n2.5,0.2\n", "an even grid");
  refused("lag,value\n0,1\n", "at least 2 rows");
  // Text rounding of an even grid passes (1e-12 relative); Phi(0) within 1e-9 passes.
  CHECK(grid_of("lag,value\n0,1.0000000001\n0.1,0.5\n0.2000000000001,0.2\n").phi.size() == 3);
}

// ---- line spectra (rope, rope-matched, 1-D rf-rope) ---------------------------------------------------------------

namespace {

Eigen::VectorXd integer_lags(int n) {
  Eigen::VectorXd x(n);
  for (int k = 0; k < n; ++k) x[k] = k;
  return x;
}

Eigen::VectorXd sorted(Eigen::VectorXd v) {
  std::sort(v.data(), v.data() + v.size());
  return v;
}

}  // namespace

TEST_CASE("line spectrum of partial rope: the identity dims are an atom at 0 of mass (n - r)/(2 a^2 F + n - r) = 1/2") {
  // rope:dim=64,partial=0.5: n = 64, r = 32, F = 16, a = 1, so T = tr G(0) = 2 F + (n - r) = 64: mass 32/64 at w = 0
  // and 2/64 at each theta_i = 1e4^(-2i/32), i < 16 (written here).
  const Encoding e = parse_encoding("rope:dim=64,partial=0.5");
  std::string why = "unset";
  const auto s = line_spectrum(e, &why);
  REQUIRE(s);
  CHECK(why.empty());
  REQUIRE(s->w.size() == 17);
  CHECK(s->w[0] == 0);
  CHECK(s->mass[0] == 0.5);  // 32/64: exact in binary
  std::vector<double> theta;
  for (int i = 0; i < 16; ++i) theta.push_back(std::pow(1e4, -2.0 * i / 32));
  std::sort(theta.begin(), theta.end());
  for (int i = 0; i < 16; ++i) {
    CAPTURE(i);
    CHECK(s->w[i + 1] == doctest::Approx(theta[i]).epsilon(1e-15));  // pow vs the library's pow: an ulp
    CHECK(s->mass[i + 1] == 1.0 / 32);
  }
  CHECK(s->cdf[16] == 1);
  // The identity Phi = sum_i m_i cos(w_i Dp) against the encoding's own kernel at 0, tiny, typical and huge lags:
  // 17 products summed in two orders, each |term| <= 1/2: a few eps, so 1e-14.
  Eigen::VectorXd x(8);
  x << 0, 1e-8, 1, 7.5, 100, 4096, 1e6, 1e12;
  Lags lags = x;
  CHECK((line_kernel(*s, x) - kernel(e, lags)).cwiseAbs().maxCoeff() < 1e-14);
  // And against the closed form written here: 1/2 + (1/32) sum_i cos(theta_i x).
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    double want = 0.5;
    for (double t : theta) want += std::cos(t * x[k]) / 32;
    CAPTURE(x[k]);
    CHECK(line_kernel(*s, x.segment(k, 1))[0] == doctest::Approx(want).epsilon(1e-14).scale(1));
  }
}

TEST_CASE("line spectra: rope, rope-freqs, rope-matched and 1-D rf-rope have one, equal to their kernel; no other family") {
  // Every contract spelling: a line spectrum exactly for the three rotary families (dynamic NTK excepted: its
  // frequencies need a sequence length), and then the line sum is the kernel to line_identity_tolerance (the CLI's
  // check) at lags 0..4096 and a few huge ones.
  Eigen::VectorXd x(4100);
  x.head(4097) = integer_lags(4097);
  x.tail(3) << 1e5, 3.3e7, 1e9;
  const Lags lags = x;
  for (const std::string& text : ropekit::test::kContractSpellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    const std::string family = family_name(e);
    const bool dynamic = text.find("dynamic") != std::string::npos;
    const bool expected = !dynamic && (family == "rope" || family == "rope-matched" || family == "rf-rope");
    std::string why;
    const auto s = line_spectrum(e, &why);
    CAPTURE(why);
    CHECK(s.has_value() == expected);
    if (!s) {
      CHECK_FALSE(why.empty());
      continue;
    }
    CHECK((s->mass.array() >= 0).all());
    CHECK(s->mass.sum() == doctest::Approx(1).epsilon(1e-14));  // <= 65 terms of an ulp each
    for (Eigen::Index i = 1; i < s->w.size(); ++i) CHECK(s->w[i] >= s->w[i - 1]);
    const double residual = (line_kernel(*s, x) - kernel(e, lags)).cwiseAbs().maxCoeff();
    CAPTURE(residual);
    CHECK(residual <= line_identity_tolerance(*s));
  }
  SUBCASE("the reasons name the family or the missing length") {
    std::string why;
    CHECK_FALSE(line_spectrum(parse_encoding("damped:gamma=1e-3,dim=32,F=8"), &why));
    CHECK(why.find("damped is not rope") != std::string::npos);
    CHECK_FALSE(line_spectrum(parse_encoding("rope:dim=32,scaling=dynamic(factor=4,orig=64)"), &why));
    CHECK(why.find("not fixed") != std::string::npos);
    CHECK_FALSE(line_spectrum(parse_encoding("rf-rope:spectrum=gaussian(sigma=1,dims=2),blocks=4,seed=1"), &why));
  }
}

TEST_CASE("YaRN 128/1e4 factor 32: the quantile design is exactly YaRN's 64 frequencies (each D/64 times)") {
  // a = 0.1 ln 32 + 1 multiplies every rotary block alike, so every mass is 2 a^2/(2 a^2 64) = 1/64 (to an ulp).
  const Encoding e = parse_encoding("rope:dim=128,base=1e4,scaling=yarn(factor=32,orig=4096)");
  const auto s = line_spectrum(e);
  REQUIRE(s);
  REQUIRE(s->w.size() == 64);
  for (Eigen::Index i = 0; i < 64; ++i) CHECK(s->mass[i] == doctest::Approx(1.0 / 64).epsilon(1e-15));
  const Eigen::VectorXd theta = sorted(frequencies(e).theta.col(0));
  CHECK(s->w == theta);
  const Eigen::VectorXd x = integer_lags(4097);
  const Eigen::VectorXd phi = kernel(e, Lags(x));
  for (int D : {64, 640}) {
    CAPTURE(D);
    const Eigen::VectorXd w = design_frequencies(*s, D, DesignSampling::quantile, 0);
    // u_i = (i - 1/2)/D sits half a draw away from every cdf step k/64 (sums of 1/64 rounded at most an ulp).
    for (int i = 0; i < D; ++i) CHECK(w[i] == theta[i / (D / 64)]);
    // (1/D) sum of 64 cosines, each D/64 times, against tr G/tr G(0): rounding of two 64-term sums, ~1e-14.
    const double err = (realised_kernel(w, x) - phi).cwiseAbs().maxCoeff();
    CAPTURE(err);
    CHECK(err < 1e-12);
  }
}

TEST_CASE("lines, iid: the realised error is Prop 4's size and falls as D^(-1/2)") {
  // YaRN 64/1e4 factor 8 on lags 0..4096; Prop 4: Var = (1/D)[(1 + Phi(2x))/2 - Phi(x)^2], Phi(2x) from the encoding.
  const Encoding e = parse_encoding("rope:dim=64,base=1e4,scaling=yarn(factor=8,orig=512)");
  const auto s = line_spectrum(e);
  REQUIRE(s);
  const Eigen::VectorXd x = integer_lags(4097);
  const Eigen::VectorXd phi = kernel(e, Lags(x)), phi2 = kernel(e, Lags(2 * x));
  const std::uint64_t seed = test_seed(20250101);
  CAPTURE(seed);
  auto mean_variance = [&](int D) {
    double v = 0;
    for (Eigen::Index k = 0; k < x.size(); ++k) v += iid_design_variance(phi[k], phi2[k], D);
    return v / static_cast<double>(x.size());
  };
  // D = 4096: E[rms^2] = mean Var over the lags; one design's rms^2 is an average over 4097 lags of squared errors
  // with that mean, correlated across lags but far from a single draw: within a factor 2 of the root.
  const Eigen::VectorXd w = design_frequencies(*s, 4096, DesignSampling::iid, seed);
  const double r = rms(realised_kernel(w, x) - phi), expect = std::sqrt(mean_variance(4096));
  CAPTURE(r);
  CAPTURE(expect);
  CHECK(r > expect / 2);
  CHECK(r < expect * 2);
  // The slope of the mean rms over 10 seeds against D (as the table route's test).
  std::vector<double> Ds = {64, 256, 1024, 4096}, err;
  for (double D : Ds) {
    double sum = 0;
    for (int k = 0; k < 10; ++k)
      sum += rms(realised_kernel(design_frequencies(*s, static_cast<int>(D), DesignSampling::iid, seed + k), x) - phi);
    err.push_back(sum / 10);
  }
  const double slope = loglog_slope(Ds, err);
  CAPTURE(slope);
  CHECK(slope >= -0.6);
  CHECK(slope <= -0.4);
  // Draws: each an atom, with the library's seed stream: U_i from Rng(seed, kStreamDesign) in order.
  Rng rng(seed, kStreamDesign, 0);
  for (int i = 0; i < 16; ++i) CHECK(w[i] == quantile(*s, rng.uniform()));
}

TEST_CASE("lines, antithetic: pairs Q(U), Q(1 - U), and the exact variance equals a Monte Carlo estimate") {
  // rope:dim=8 (atoms 0.001, 0.01, 0.1, 1, mass 1/4 each); D = 6 (3 pairs); 20000 designs; tolerance 6 standard
  // errors of a variance estimate (sd ~ var sqrt(2/(n-1)) for near-normal means; 6 sigma: ~1e-9 false alarms per lag).
  const auto s = line_spectrum(parse_encoding("rope:dim=8,base=1e4"));
  REQUIRE(s);
  const std::uint64_t seed = test_seed(4242);
  CAPTURE(seed);
  const Eigen::VectorXd a = design_frequencies(*s, 7, DesignSampling::antithetic, seed);
  Rng rng(seed, kStreamDesign, 0);
  for (int i = 0; i < 7; i += 2) {
    const double u = rng.uniform();
    CHECK(a[i] == quantile(*s, u));
    if (i + 1 < 7) CHECK(a[i + 1] == quantile(*s, 1 - u));
  }
  Eigen::VectorXd lags(4);
  lags << 0.5, 3, 30, 300;
  const Eigen::VectorXd v = antithetic_design_variance(*s, lags, 6);
  const int n = 20000;
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(4), sum2 = Eigen::VectorXd::Zero(4);
  for (int r = 0; r < n; ++r) {
    const Eigen::VectorXd k = realised_kernel(design_frequencies(*s, 6, DesignSampling::antithetic, seed + r), lags);
    sum += k;
    sum2 += k.cwiseProduct(k);
  }
  for (int i = 0; i < 4; ++i) {
    const double mean = sum[i] / n, var = (sum2[i] - n * mean * mean) / (n - 1);
    CAPTURE(lags[i]);
    CAPTURE(var);
    CAPTURE(v[i]);
    CHECK(std::fabs(var - v[i]) <= 6 * v[i] * std::sqrt(2.0 / (n - 1)) + 1e-12);
  }
  // Exact by hand at D = 2 (one pair): Q(U) and Q(1 - U) are atoms k and 3 - k (U in the k-th quarter), so the pair
  // sum is c_k + c_{3-k}, equally likely over k: Var = (1/4) Var_k[c_k + c_{3-k}].
  const Eigen::VectorXd one = antithetic_design_variance(*s, lags.head(1), 2);
  double c[4], m = 0, m2 = 0;
  for (int k = 0; k < 4; ++k) c[k] = std::cos(s->w[k] * lags[0]);
  for (int k = 0; k < 4; ++k) m += (c[k] + c[3 - k]) / 4, m2 += (c[k] + c[3 - k]) * (c[k] + c[3 - k]) / 4;
  CHECK(one[0] == doctest::Approx((m2 - m * m) / 4).epsilon(1e-13));  // sums of 8 terms: ~1e-15 relative
  // An atom at 0 (partial rope) is drawn as the smallest normal double, never 0.
  const auto p = line_spectrum(parse_encoding("rope:dim=64,partial=0.5"));
  REQUIRE(p);
  CHECK(quantile(*p, 0.25) == std::numeric_limits<double>::min());
}
