// Lags (lib/ropekit/core/lags.hpp): near_grid, the exact grid standing in for decimal lag lists.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/lags.hpp"
#include "ropekit/core/vecmath.hpp"

using namespace ropekit;

namespace {
std::vector<double> one_d(const Lags& l) { return {l.data(), l.data() + l.rows()}; }
double ulp(double x) { return std::nextafter(x, INFINITY) - x; }
}  // namespace

TEST_CASE("decimal lags 0.1,0.2,...,6.4 are a grid up to rounding, and near_grid finds it") {
  std::string text;
  for (int i = 1; i <= 64; ++i) text += fmt::format("{}{}.{}", i > 1 ? "," : "", i / 10, i % 10);
  const auto t = one_d(parse_lags(text, 1));
  REQUIRE(t.size() == 64);
  CHECK(t[62] == 6.3);
  CHECK_FALSE(is_even_grid(t.data(), t.size()));  // decimal input is not an exact grid: 0.3 != 0.1 + 2 * 0.1
  const auto g = near_grid(t);
  REQUIRE(g);
  CHECK(is_even_grid(g->s.data(), g->s.size()));
  CHECK(g->s[0] == 0);
  CHECK(g->t0 == 0.1);
  CHECK(g->delta > 0);
  CHECK(g->delta <= kNearGridUlps * ulp(6.4));
  // Independent check of delta: the grid's points t0 + s[m] (long double, exact here) against the parsed lags and
  // against the decimal numbers meant, (m + 1) / 10 (each parsed double is within 1/2 ulp of its decimal).
  for (std::size_t m = 0; m < t.size(); ++m) {
    CAPTURE(m);
    const long double point = static_cast<long double>(g->t0) + g->s[m];
    CHECK(std::fabs(point - t[m]) <= g->delta);
    const long double meant = static_cast<long double>(m + 1) / 10;
    CHECK(std::fabs(point - meant) <= (kNearGridUlps + 0.5) * ulp(6.4));
  }
}

TEST_CASE("ranges start:stop:step are grids: exact when start + step - start == step, near otherwise") {
  // 0.1:6.45:0.1 gives 0.1 + i 0.1, and 0.2 - 0.1 == 0.1 exactly: the list is its own grid (delta = 0).
  const auto a = one_d(parse_lags("0.1:6.45:0.1", 1));
  REQUIRE(a.size() == 64);
  CHECK(is_even_grid(a.data(), a.size()));
  const auto ga = near_grid(a);
  REQUIRE(ga);
  CHECK(ga->delta == 0);
  CHECK(ga->t0 == 0);
  CHECK(ga->s == a);
  // 1:7.35:0.1: 1.1 - 1 = 0.10000000000000009 != 0.1, so the list is not exactly even; a grid of doubles
  // starting at 1 cannot have step 0.1 (its steps are multiples of 2^-52: 63 steps drift 6 ulp(7.3)), offsets
  // m 0.1 from t0 = 1 can: every residual within the tolerance.
  const auto b = one_d(parse_lags("1:7.35:0.1", 1));
  REQUIRE(b.size() == 64);
  CHECK_FALSE(is_even_grid(b.data(), b.size()));
  const auto gb = near_grid(b);
  REQUIRE(gb);
  CHECK(gb->delta <= kNearGridUlps * ulp(7.3));
  // A long integer range is exact.
  const auto c = one_d(parse_lags("0:4096", 1));
  const auto gc = near_grid(c);
  REQUIRE(gc);
  CHECK(gc->delta == 0);
}

TEST_CASE("near_grid refuses lists that are not even grids") {
  CHECK_FALSE(near_grid(std::vector<double>{1.0}));
  CHECK_FALSE(near_grid(std::vector<double>{2, 2, 2}));  // zero step
  CHECK_FALSE(near_grid(std::vector<double>{0, 1, 2.5}));
  CHECK_FALSE(near_grid(std::vector<double>{0, 1, NAN, 3}));
  // 10 ulp off one point of an exact grid: beyond kNearGridUlps = 4.
  std::vector<double> t;
  for (int i = 0; i < 16; ++i) t.push_back(0.5 * i);
  t[7] += 10 * ulp(7.5);
  CHECK_FALSE(near_grid(t));
  t[7] = 3.5 + 2 * ulp(7.5);  // 2 ulp of max|t|: accepted (re-anchored at t0 = 0), delta = that shift
  const auto g = near_grid(t);
  REQUIRE(g);
  CHECK(g->delta == 2 * ulp(7.5));
}

TEST_CASE("LagStream::count is the number of lags next() produces, without expanding the ranges") {
  // The count comes from the quotient (stop - start) / step, corrected where its rounding is one off; the lags come
  // from start + i step < stop one by one. Ranges whose quotient rounds across an integer, decimal steps, a step below
  // ulp(start) (values repeat), and lists of several items.
  for (const std::string text : {"0:1048576", "0:1:0.1", "0.1:6.45:0.1", "1:7.35:0.1", "0:0.3:0.1", "0:0.7:0.1",
                                 "10000000000000000:10000000000000004:0.5", "3,0:10:3,2.5", "1,5:5", "0:1e-300:1e-301"}) {
    CAPTURE(text);
    LagStream s(text, Where("test"), "--lags");
    std::vector<double> buf(1000);
    std::int64_t produced = 0;
    for (std::size_t n; (n = s.next(buf.data(), buf.size())) > 0;) produced += static_cast<std::int64_t>(n);
    CHECK(s.count() == produced);
  }
}
