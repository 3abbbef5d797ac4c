// Seeded streams (lib/ropekit/core/rng.hpp): reproducible, independent by key, and the variates' laws.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include <boost/math/distributions/normal.hpp>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {
}  // namespace

TEST_CASE("a key gives one sequence, and keys differing in seed, stream or index give different ones") {
  Rng a(5, 1, 2), b(5, 1, 2), c(6, 1, 2), d(5, 2, 2), e(5, 1, 3);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    CHECK(x == b.next());
    CHECK(x != c.next());
    CHECK(x != d.next());
    CHECK(x != e.next());
  }
}

TEST_CASE("uniform() is in the open interval, below(n) in range, and normal and gamma variates have their moments") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  Rng rng(seed, 3);
  const int n = 200000;
  double mu = 0, m2 = 0, m4 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    REQUIRE(u > 0);
    REQUIRE(u < 1);
    REQUIRE(rng.below(7) < 7);
  }
  std::vector<double> z(n);
  rng.fill_normal(z.data(), z.size());
  for (double v : z) {
    mu += v / n;
    m2 += v * v / n;
    m4 += v * v * v * v / n;
  }
  // N(0,1): mean 0 (sd 1/sqrt n), E z^2 = 1 (sd sqrt(2/n)), E z^4 = 3 (sd sqrt(96/n)).
  CHECK(std::abs(mu) <= z_bound() / std::sqrt(n));
  CHECK(std::abs(m2 - 1) <= z_bound() * std::sqrt(2.0 / n));
  CHECK(std::abs(m4 - 3) <= z_bound() * std::sqrt(96.0 / n));
  for (double shape : {0.1, 0.7, 1.0, 4.5}) {
    // Gamma(a, 1): mean a, variance a.
    double s1 = 0;
    for (int i = 0; i < n; ++i) s1 += std::exp(rng.log_gamma_variate(shape)) / n;
    CAPTURE(shape);
    CHECK(std::abs(s1 - shape) <= z_bound() * std::sqrt(shape / n));
  }
}

TEST_CASE("seed_from_env reads an integer and rejects anything else") {
  ::setenv("ROPEKIT_RNG_TEST_SEED", "42", 1);
  CHECK(seed_from_env("ROPEKIT_RNG_TEST_SEED", 7) == 42);
  ::setenv("ROPEKIT_RNG_TEST_SEED", "forty", 1);
  CHECK_THROWS_AS(seed_from_env("ROPEKIT_RNG_TEST_SEED", 7), InputError);
  ::unsetenv("ROPEKIT_RNG_TEST_SEED");
  CHECK(seed_from_env("ROPEKIT_RNG_TEST_SEED", 7) == 7);
}
