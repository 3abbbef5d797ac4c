// Men et al.'s base bound (models/base_bound.hpp) against a brute-force scan written here: B(m) = sum_i cos(m theta_i)
// summed directly with std::cos, its first negative lag, and the smallest grid base with none.

#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "ropekit/core/error.hpp"
#include "ropekit/models/base_bound.hpp"

using namespace ropekit;

namespace {

// First m in 1..L with sum_{i < n/2} cos(m base^{-2i/n}) < 0 (theta by exp/log, not pow).
std::optional<std::int64_t> brute_first_negative(double base, int n, std::int64_t L) {
  for (std::int64_t m = 1; m <= L; ++m) {
    double sum = 0;
    for (int i = 0; i < n / 2; ++i) sum += std::cos(static_cast<double>(m) * std::exp(-(2.0 * i / n) * std::log(base)));
    if (sum < -1e-12) return m;  // a sum within rounding of 0 would make the two routes disagree on its sign
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("first negative lag: cos(m) for one frequency theta = 1 is first negative at m = 2") {
  const auto neg = first_negative_lag(parse_encoding("rope:dim=2,base=10"), 100);
  REQUIRE(neg);
  CHECK(neg->lag == 2);
  CHECK(neg->kernel == doctest::Approx(std::cos(2.0)).epsilon(1e-15));
  CHECK_FALSE(first_negative_lag(parse_encoding("rope:dim=2,base=10"), 1));  // cos 1 > 0
  // Past the first block of 8192 lags: cos(1e-4 m) turns negative at m = 15708 > 1e4 pi / 2 = 15707.96.
  const auto far = first_negative_lag(parse_encoding("rope-freqs:freqs=[1e-4]"), 20000);
  REQUIRE(far);
  CHECK(far->lag == 15708);
  CHECK_FALSE(first_negative_lag(parse_encoding("rope-freqs:freqs=[1e-4]"), 15707));
}

TEST_CASE("smallest non-negative base: the brute-force scan's base, for several head sizes and lengths") {
  for (const auto& [n, L] : {std::pair{8, 200}, std::pair{16, 500}, std::pair{32, 300}}) {
    const int n_ = n;
    const std::int64_t L_ = L;
    CAPTURE(n_);
    CAPTURE(L_);
    const BaseScan scan{10, 1e8, 16};
    std::optional<double> want;
    for (int j = 0; j <= 7 * 16; ++j) {
      const double b = 10 * std::pow(10.0, j / 16.0);
      if (!brute_first_negative(b, n, L)) {
        want = b;
        break;
      }
    }
    const auto got = smallest_nonnegative_base(parse_encoding("rope:dim=" + std::to_string(n) + ",base=100"), L, {}, scan);
    REQUIRE(want);
    REQUIRE(got.base);
    CHECK(*got.base == doctest::Approx(*want).epsilon(1e-12));
  }
}

TEST_CASE("base bound refusals: no geometric schedule, a bad scan, max_lag < 1") {
  CHECK_THROWS_WITH_AS(smallest_nonnegative_base(parse_encoding("alibi:slope=0.5,L=64"), 100),
                       doctest::Contains("(must be an encoding with a geometric frequency schedule"), InputError);
  CHECK_THROWS_WITH_AS(smallest_nonnegative_base(parse_encoding("rope:dim=8"), 100, {}, BaseScan{10, 1, 8}),
                       doctest::Contains("0 < lo <= hi"), InputError);
  CHECK_THROWS_WITH_AS(first_negative_lag(parse_encoding("rope:dim=8"), 0), doctest::Contains("max_lag = 0 (must be >= 1)"),
                       InputError);
}

TEST_CASE("scan_kernel: cos(1e-4 m) over 1..40000 has its minimum -1 near m = 1e4 pi, first negative at 15708") {
  const auto s = scan_kernel(parse_encoding("rope-freqs:freqs=[1e-4]"), 40000);
  CHECK(s.argmin == 31416);  // the integer nearest 1e4 pi = 31415.93
  CHECK(s.min == doctest::Approx(std::cos(31416e-4)).epsilon(1e-15));
  REQUIRE(s.first_negative);
  CHECK(s.first_negative->lag == 15708);
  CHECK_THROWS_WITH_AS(scan_kernel(parse_encoding("rope:dim=8"), 0), doctest::Contains("max_lag = 0 (must be >= 1)"),
                       InputError);
}
