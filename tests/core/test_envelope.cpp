// Per-pixel-column envelopes: each point lands in the column under it (checked against the column boundaries
// computed here from the axis), keeping count, means, min and max; non-finite y marks a gap; points off the axis
// are counted, not binned.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ropekit/core/envelope.hpp"

using namespace ropekit;

TEST_CASE("a linear axis: every point in the column floor((x - lo) / (hi - lo) * n), extremes and means kept") {
  // 10 columns over [0, 10]: column c holds [c, c + 1) and the last one also x = 10.
  SeriesEnvelope e(XAxis{0, 10, false}, 10);
  std::vector<double> x, y;
  for (int i = 0; i <= 1000; ++i) x.push_back(i / 100.0), y.push_back(std::sin(i / 7.0));
  e.add(x, y);
  REQUIRE(e.columns().size() == 10);
  for (int c = 0; c < 10; ++c) {
    // The column's points by their index: x = i / 100 in [c, c + 1), so i in [100 c, 100 c + 99] (+ i = 1000 last).
    const int first = 100 * c, last = c == 9 ? 1000 : 100 * c + 99;
    double lo = INFINITY, hi = -INFINITY, sum = 0, xsum = 0;
    for (int i = first; i <= last; ++i) lo = std::min(lo, y[i]), hi = std::max(hi, y[i]), sum += y[i], xsum += x[i];
    const auto& col = e.columns()[static_cast<std::size_t>(c)];
    CAPTURE(c);
    CHECK(col.count == last - first + 1);
    CHECK(col.min == lo);  // the same values: exact
    CHECK(col.max == hi);
    CHECK(col.y_sum == sum);  // the points were added in index order, as summed here: the same roundings
    CHECK(col.x_sum == xsum);
    CHECK_FALSE(col.gap);
  }
  CHECK(e.outside() == 0);
}

TEST_CASE("a log axis: columns equal in log10 x; x <= 0 and x beyond the range are outside, counted") {
  // [1, 1000] in 3 columns: one decade each (points off the decade boundaries, which round either way).
  SeriesEnvelope e(XAxis{1, 1000, true}, 3);
  for (double x : {1.0, 9.99, 10.5, 99.0, 101.0, 1000.0}) e.add(x, x);
  for (double x : {0.0, -5.0, 0.5, 1000.5, std::nan("")}) e.add(x, 1);
  CHECK(e.columns()[0].count == 2);
  CHECK(e.columns()[1].count == 2);
  CHECK(e.columns()[2].count == 2);
  CHECK(e.columns()[2].max == 1000);
  CHECK(e.outside() == 5);
}

TEST_CASE("non-finite values mark a gap; values <= 0 are kept but not in the log summaries") {
  SeriesEnvelope e(XAxis{0, 4, false}, 4);
  e.add(0.5, 2);
  e.add(0.5, -3);
  e.add(1.5, std::nan(""));
  e.add(2.5, std::numeric_limits<double>::infinity());
  const auto& c = e.columns();
  CHECK(c[0].count == 2);
  CHECK(c[0].positive == 1);
  CHECK(c[0].min == -3);
  CHECK(c[0].min_positive == 2);
  CHECK(c[0].log_sum == doctest::Approx(std::log10(2.0)));
  CHECK(c[1].gap);
  CHECK(c[1].count == 0);
  CHECK(c[2].gap);
  CHECK_FALSE(c[3].gap);
  CHECK(c[3].count == 0);
}

TEST_CASE("envelopes refuse axes that cannot be drawn and mismatched points") {
  CHECK_THROWS_AS(SeriesEnvelope(XAxis{0, 1, false}, 0), std::invalid_argument);
  CHECK_THROWS_AS(SeriesEnvelope(XAxis{1, 1, false}, 10), std::invalid_argument);
  CHECK_THROWS_AS(SeriesEnvelope(XAxis{0, 10, true}, 10), std::invalid_argument);  // log from 0
  CHECK_THROWS_AS(SeriesEnvelope(XAxis{0, std::numeric_limits<double>::infinity(), false}, 10), std::invalid_argument);
  SeriesEnvelope e(XAxis{0, 1, false}, 2);
  const std::vector<double> x{0, 1}, y{0};
  CHECK_THROWS_AS(e.add(x, y), std::invalid_argument);
}

TEST_CASE("QuantileSketch: exact order statistics up to 128 values, then within its stated rank error") {
  // Values in a scrambled order (a multiplicative walk mod a prime), so the sketch sees no sorted runs.
  auto values = [](int n) {
    std::vector<double> v;
    std::uint64_t s = 1;
    for (int i = 0; i < n; ++i) v.push_back(static_cast<double>(s = s * 48271 % 2147483647));
    return v;
  };
  for (const int n : {1, 2, 127, 128}) {
    QuantileSketch q;
    auto v = values(n);
    for (double y : v) q.add(y);
    std::sort(v.begin(), v.end());
    CAPTURE(n);
    CHECK(q.rank_error() == 0);
    for (int r = 1; r <= n; ++r) CHECK(q.at_rank(r) == v[static_cast<std::size_t>(r - 1)]);
  }
  for (const int n : {129, 1000, 100000}) {
    QuantileSketch q;
    auto v = values(n);
    for (double y : v) q.add(y);
    std::sort(v.begin(), v.end());
    CAPTURE(n);
    // The stated bound, and the H n / 128 it is under: H <= log2(n / 128) + 1 compacting levels.
    const double H = std::floor(std::log2(n / 128.0)) + 1;
    CHECK(q.rank_error() <= H * n / 128);
    for (const double r : {1.0, std::ceil(n / 2.0), 0.9 * n, static_cast<double>(n)}) {
      const double got = q.at_rank(r);
      // Its true rank: the position of the value in the sorted data (the values are distinct).
      const double true_rank = static_cast<double>(std::lower_bound(v.begin(), v.end(), got) - v.begin()) + 1;
      CAPTURE(r);
      CHECK(std::abs(true_rank - r) <= q.rank_error());
    }
  }
}

TEST_CASE("an envelope keeping medians: each column's lower median, of the positive values for a log axis") {
  SeriesEnvelope e(XAxis{0, 2, false}, 2, true);
  // Column 0: -5, 1, 2, 3 (median 1; of the positives 2); column 1: 7 alone.
  for (const auto& [x, y] : std::vector<std::pair<double, double>>{{0.1, 3}, {0.2, -5}, {0.3, 1}, {0.4, 2}, {1.5, 7}})
    e.add(x, y);
  CHECK(column_median(e.columns()[0], false) == 1);
  CHECK(column_median(e.columns()[0], true) == 2);
  CHECK(column_median(e.columns()[1], false) == 7);
  SeriesEnvelope plain(XAxis{0, 2, false}, 2);
  plain.add(0.1, 3);
  CHECK(std::isnan(column_median(plain.columns()[0], false)));  // no medians kept
}
