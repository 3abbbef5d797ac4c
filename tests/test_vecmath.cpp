// Vectorised helpers (lib/ropekit/vecmath.hpp) against scalar std:: and long double references.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ropekit/rng.hpp"
#include "ropekit/vecmath.hpp"

using namespace ropekit;

TEST_CASE("log_array and sincospi_array agree with std::log and sin/cos(pi x) to an ulp or two") {
  Rng rng(11, 1);
  std::vector<double> x(1003), y(x.size()), s(x.size()), c(x.size());
  for (double& v : x) v = std::exp(40 * (rng.uniform() - 0.5));
  log_array(x.data(), y.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == doctest::Approx(std::log(x[i])).epsilon(4e-16));
  for (double& v : x) v = 8 * (rng.uniform() - 0.5);
  sincospi_array(x.data(), s.data(), c.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double px = 3.14159265358979323846264338327950288L * static_cast<long double>(x[i]);
    CHECK(std::abs(s[i] - static_cast<double>(sinl(px))) <= 2.3e-16);  // SLEEF u05, plus the reference's own rounding
    CHECK(std::abs(c[i] - static_cast<double>(cosl(px))) <= 2.3e-16);
  }
  // Exact phases: sin(pi) = 0, cos(pi/2) = 0 exactly.
  const double half[2] = {1.0, 0.5};
  double hs[2], hc[2];
  sincospi_array(half, hs, hc, 2);
  CHECK(hs[0] == 0.0);
  CHECK(hc[1] == 0.0);
}

TEST_CASE("dot_cos_sin matches a long double sum, for every tail length") {
  Rng rng(12, 1);
  for (std::size_t n : {1u, 7u, 8u, 9u, 31u, 64u, 257u}) {
    std::vector<double> w(n), a(n), b(n), u(n);
    for (std::size_t i = 0; i < n; ++i) {
      w[i] = rng.normal();
      a[i] = rng.normal();
      b[i] = rng.normal();
    }
    const double t = 7.3;
    long double ref = 0, mag = 0;
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = t * w[i];
      ref += a[i] * cosl(static_cast<long double>(u[i])) + b[i] * sinl(static_cast<long double>(u[i]));
      mag += std::abs(a[i]) + std::abs(b[i]);
    }
    CAPTURE(n);
    // Each term within ~1 ulp (SLEEF u10) plus summation: 4 eps * sum |a| + |b|.
    CHECK(std::abs(dot_cos_sin(t, w.data(), a.data(), b.data(), n) - static_cast<double>(ref)) <= 4.5e-16 * static_cast<double>(mag));
    CHECK(std::abs(dot_cos_sin(u.data(), a.data(), b.data(), n) - static_cast<double>(ref)) <= 4.5e-16 * static_cast<double>(mag));
  }
}

TEST_CASE("the angle-addition grid kernel agrees with direct sincos at every grid point") {
  Rng rng(13, 1);
  const std::size_t n = 37, count = 200;
  std::vector<double> w(n), a(n), b(n), out(count), scratch(8 * count), t(count);
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = 2 * rng.normal();
    a[i] = rng.normal();
    b[i] = rng.normal();
  }
  for (double start : {0.0, -3.0}) {
    for (std::size_t m = 0; m < count; ++m) t[m] = start + static_cast<double>(m) * 0.5;
    REQUIRE(is_even_grid(t.data(), count));
    dot_cos_sin_grid(t.data(), count, w.data(), a.data(), b.data(), n, out.data(), scratch.data());
    double mag = 0;
    for (std::size_t i = 0; i < n; ++i) mag += std::abs(a[i]) + std::abs(b[i]);
    for (std::size_t m = 0; m < count; ++m) {
      CAPTURE(m);
      // Up to kAnchor - 1 = 31 rotations since the last exact anchor, each adding ~2 eps per term:
      // 100 eps * sum |a| + |b| bounds the drift with margin.
      CHECK(std::abs(out[m] - dot_cos_sin(t[m], w.data(), a.data(), b.data(), n)) <= 100 * 2.2e-16 * mag);
    }
  }
  const double uneven[3] = {0, 1, 2.5};
  CHECK_FALSE(is_even_grid(uneven, 3));
  const double flat[3] = {1, 1, 1};
  CHECK_FALSE(is_even_grid(flat, 3));
}
