// all_finite (core/finite.hpp) against Eigen's allFinite on every kind of entry, in every position.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ropekit/core/finite.hpp"

using namespace ropekit;

TEST_CASE("all_finite agrees with Eigen's allFinite: inf, -inf, NaN, huge, subnormal, signed zero, anywhere") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double odd[] = {kInf, -kInf, std::nan(""), -std::nan(""), std::numeric_limits<double>::max(),
                        -std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(), -0.0, 1e308};
  // 37 x 5: not a multiple of any vector width, so entries land in the vector body and in the scalar tail.
  Eigen::MatrixXd m = Eigen::MatrixXd::Random(37, 5) * 1e300;
  CHECK(all_finite(m));
  for (double v : odd)
    for (Eigen::Index i : {Eigen::Index{0}, Eigen::Index{17}, m.size() - 1}) {
      Eigen::MatrixXd a = m;
      a.data()[i] = v;
      CAPTURE(v);
      CAPTURE(i);
      CHECK(all_finite(a) == a.allFinite());
      CHECK(all_finite(a.col(i / a.rows())) == a.col(i / a.rows()).allFinite());  // a block
    }
  CHECK(all_finite(Eigen::MatrixXd(0, 3)));  // empty: vacuously finite, as allFinite
}
