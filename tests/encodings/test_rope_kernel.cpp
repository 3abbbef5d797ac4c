// Deterministic RoPE through the RF-RoPE lens (lib/ropekit/encodings/rope_kernel.hpp): empirical kernel, sine
// residual and the log-uniform continuum kernel with Ci (spec rf-rope.md section 3).
#include <doctest/doctest.h>

#include <cmath>

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/rope_kernel.hpp"

using namespace ropekit;

TEST_CASE("the continuum kernel is the log-uniform density's cosine transform (quadrature over log theta)") {
  // theta = B^{-s}, s ~ U(0, 1): E[cos(theta m)] = int_0^1 cos(m B^{-s}) ds, and the same for sin.
  using GK = boost::math::quadrature::gauss_kronrod<double, 61>;
  const RopeGrid g{128, 1e4};
  for (double m : {0.0, 1e-6, 1.0, 10.0, 100.0, 1000.0, 1e4}) {
    CAPTURE(m);
    // Tolerance 1e-14 relative to the integrand's L1 norm: reachable, so the adaptive tree stays finite.
    const double c = GK::integrate([&](double s) { return std::cos(m * std::pow(g.base, -s)); }, 0.0, 1.0, 15, 1e-14);
    const double s = GK::integrate([&](double s) { return std::sin(m * std::pow(g.base, -s)); }, 0.0, 1.0, 15, 1e-14);
    const RopeKernelValues v = rope_kernel(g, m);
    // Oscillatory for m = 1e4 (m B^{-s} sweeps m/B..m, ~1600 periods): adaptive Gauss-Kronrod keeps ~1e-13 absolute.
    CHECK(std::abs(v.continuum - c) <= 1e-13);
    CHECK(std::abs(v.continuum_sine - s) <= 1e-13);
  }
}

TEST_CASE("spec section 3's numbers for d = 128, B = 1e4") {
  // Spec: discrete 0.970 / 0.669 / 0.477 / 0.159 vs continuum 0.974 / 0.682 / 0.437 / 0.188 at 1 / 10 / 100 / 1000.
  const RopeGrid g{128, 1e4};
  const double m[] = {1, 10, 100, 1000};
  const double discrete[] = {0.970, 0.669, 0.477, 0.159}, continuum[] = {0.974, 0.682, 0.437, 0.188};
  for (int i = 0; i < 4; ++i) {
    CAPTURE(m[i]);
    const RopeKernelValues v = rope_kernel(g, m[i]);
    CHECK(std::abs(v.kernel - discrete[i]) <= 5e-4);  // the spec prints three decimals
    CHECK(std::abs(v.continuum - continuum[i]) <= 5e-4);
  }
}

TEST_CASE("empirical kernel and sine residual: the definitions, at the origin and symmetric") {
  const RopeGrid g{8, 100};
  const auto theta = g.frequencies();
  REQUIRE(theta.size() == 4);
  CHECK(theta[0] == 1.0);
  CHECK(theta[3] == doctest::Approx(std::pow(100.0, -6.0 / 8)).epsilon(1e-15));
  const RopeKernelValues at0 = rope_kernel(g, 0);
  CHECK(at0.kernel == 1.0);
  CHECK(at0.sine_residual == 0.0);
  CHECK(at0.continuum == 1.0);
  const double m = 3.7;
  const RopeKernelValues v = rope_kernel(g, m), neg = rope_kernel(g, -m);
  double c = 0, s = 0;
  for (double t : theta) {
    c += std::cos(t * m) / 4;
    s += std::sin(t * m) / 4;
  }
  CHECK(v.kernel == doctest::Approx(c).epsilon(1e-15));
  CHECK(v.sine_residual == doctest::Approx(s).epsilon(1e-15));
  CHECK(v.sine_residual != 0);  // positive frequencies: no cancellation of the sine term
  CHECK(neg.kernel == v.kernel);
  CHECK(neg.sine_residual == -v.sine_residual);
  CHECK(neg.continuum == v.continuum);
}

TEST_CASE("bad RoPE grids and lags (spellings: test_encoding)") {
  CHECK_THROWS_AS(rope_kernel(RopeGrid{8, 100}, NAN), InputError);
  CHECK_THROWS_AS(rope_kernel(RopeGrid{7, 100}, 1.0), InputError);  // odd dim
  CHECK_THROWS_AS(rope_kernel(RopeGrid{8, 1}, 1.0), InputError);    // base must exceed 1
}
