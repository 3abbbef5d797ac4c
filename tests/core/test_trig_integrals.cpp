// Cosine and sine integrals (lib/ropekit/core/trig_integrals.hpp) against quadrature and tabulated values.
#include <doctest/doctest.h>

#include <cmath>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/quadrature/ooura_fourier_integrals.hpp>

#include "ropekit/core/trig_integrals.hpp"

using namespace ropekit;

namespace {
using GK = boost::math::quadrature::gauss_kronrod<double, 61>;
// Cin(x) = int_0^x 2 sin^2(t/2)/t dt and Si(x) = int_0^x sin t/t dt, written without cancellation at t -> 0.
double cin_quad(double x) {
  return GK::integrate([](double t) { const double s = std::sin(t / 2); return t == 0 ? 0.0 : 2 * s * s / t; }, 0.0, x, 12, 2e-15);
}
double si_quad(double x) {
  return GK::integrate([](double t) { return t == 0 ? 1.0 : std::sin(t) / t; }, 0.0, x, 12, 2e-15);
}
}  // namespace

TEST_CASE("Cin and Si match Gauss-Kronrod quadrature on both sides of the series/continued-fraction switch") {
  for (double x : {1e-8, 1e-3, 0.5, 1.0, 1.999, 2.0, 2.001, 3.7, 10.0, 40.0, 100.0}) {
    CAPTURE(x);
    // The integrands are smooth and bounded: quadrature is good to a few eps of the result.
    CHECK(cin(x) == doctest::Approx(cin_quad(x)).epsilon(4e-15));
    CHECK(si(x) == doctest::Approx(si_quad(x)).epsilon(4e-15));
    CHECK(si(-x) == -si(x));
    CHECK(cin(-x) == cin(x));
  }
}

TEST_CASE("Ci and Si at large arguments match their Fourier-integral tails") {
  // Ci(x) = -int_0^inf cos(s + x)/(s + x) ds = -(cos x C - sin x S),
  // Si(x) = pi/2 - int_0^inf sin(s + x)/(s + x) ds = pi/2 - (cos x S + sin x C),
  // C, S = int_0^inf {cos, sin}(s)/(s + x) ds by Ooura's Fourier quadrature.
  boost::math::quadrature::ooura_fourier_cos<double> oc;
  boost::math::quadrature::ooura_fourier_sin<double> os;
  for (double x : {3.0, 25.0, 1e3, 1e5}) {
    CAPTURE(x);
    auto f = [x](double s) { return 1 / (s + x); };
    const double C = oc.integrate(f, 1.0).first, S = os.integrate(f, 1.0).first;
    CHECK(std::abs(ci(x) - -(std::cos(x) * C - std::sin(x) * S)) <= 1e-14);  // tails of size 1/x, quadrature ~1e-15
    CHECK(std::abs(si(x) - (M_PI / 2 - (std::cos(x) * S + std::sin(x) * C))) <= 1e-14);
  }
}

TEST_CASE("tabulated values (Abramowitz and Stegun, Table 5.1) and limits") {
  // A&S Table 5.1: Si(1) = 0.94608 30703 7, Ci(1) = 0.33740 39229 0; Si(10) = 1.65834 75942 2, Ci(10) = -0.04545 64330 0.
  CHECK(si(1.0) == doctest::Approx(0.946083070367).epsilon(1e-11));
  CHECK(ci(1.0) == doctest::Approx(0.337403922900).epsilon(1e-11));
  CHECK(si(10.0) == doctest::Approx(1.658347594218).epsilon(1e-11));
  CHECK(ci(10.0) == doctest::Approx(-0.045456433004).epsilon(1e-10));
  CHECK(ci(0.0) == -INFINITY);
  CHECK(std::isnan(ci(-1.0)));
  CHECK(si(INFINITY) == doctest::Approx(M_PI / 2).epsilon(1e-16));
  // Ci = gamma + ln x - Cin: the two routes agree where both are evaluated.
  for (double x : {0.3, 1.5, 2.5, 7.0}) CHECK(ci(x) == doctest::Approx(0.5772156649015329 + std::log(x) - cin(x)).epsilon(1e-14));
}
