// Vectorised helpers (lib/ropekit/core/vecmath.hpp) against scalar std:: and long double references.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ropekit/core/rng.hpp"
#include "ropekit/core/vecmath.hpp"

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

TEST_CASE("the fused kernels' sincos: absolute error below 1.4e-16, 1.5 ulp away from zeros, SLEEF beyond 2^30") {
  // Against long double sinl/cosl (64-bit mantissa, correctly reduced): 200,000 random angles per range.
  Rng rng(14, 1);
  for (double R : {M_PI / 4, 10.0, 1e4, 1e6, 1e9, 1e12}) {
    const std::size_t n = 200000;
    std::vector<double> x(n), s(n), c(n);
    for (double& v : x) v = R * (2 * rng.uniform() - 1);
    sincos_array_fast(x.data(), s.data(), c.data(), n);
    double max_abs = 0, max_ulp = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (auto [v, ref] : {std::pair{s[i], sinl(x[i])}, std::pair{c[i], cosl(x[i])}}) {
        const double err = std::abs(static_cast<double>(static_cast<long double>(v) - ref));
        const double r = std::abs(static_cast<double>(ref));
        max_abs = std::max(max_abs, err);
        if (r > 1e-3) max_ulp = std::max(max_ulp, err / (std::nextafter(r, INFINITY) - r));
      }
    CAPTURE(R);
    CAPTURE(max_abs);
    CAPTURE(max_ulp);
    CHECK(max_abs <= 1.4e-16);
    CHECK(max_ulp <= 1.5);
  }
  // Next to multiples of pi/2 (where the result is tiny) the three-part reduction keeps it accurate.
  std::vector<double> x;
  for (int k = 1; k < 2000000; k += 997) {
    x.push_back(k * 1.5707963267948966);
    x.push_back(std::nextafter(k * 1.5707963267948966, 0.0));
  }
  std::vector<double> s(x.size()), c(x.size());
  sincos_array_fast(x.data(), s.data(), c.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(std::abs(static_cast<double>(static_cast<long double>(s[i]) - sinl(x[i]))) <= 1e-18);
    CHECK(std::abs(static_cast<double>(static_cast<long double>(c[i]) - cosl(x[i]))) <= 1e-18);
  }
  const double special[4] = {0.0, INFINITY, NAN, 1e300};
  double ss[4], cs[4];
  sincos_array_fast(special, ss, cs, 4);
  CHECK(ss[0] == 0.0);
  CHECK(cs[0] == 1.0);
  CHECK(std::isnan(ss[1]));
  CHECK(std::isnan(cs[2]));
  CHECK(ss[3] == doctest::Approx(std::sin(1e300)).epsilon(1e-15));  // SLEEF's full-range reduction
}
