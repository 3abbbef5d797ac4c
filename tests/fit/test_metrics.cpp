// MSE and R^2 exactly as spec fixed-basis.md section 4 defines them.
#include <doctest/doctest.h>

#include "ropekit/fit/metrics.hpp"

using namespace ropekit;

TEST_CASE("MSE and R^2 of a hand-computed example") {
  Eigen::VectorXd y(4), pred(4);
  y << 1, 2, 3, 4;     // mean 2.5, population variance 1.25
  pred << 1, 2, 3, 6;  // squared errors 0, 0, 0, 4
  const FitQuality s = fit_quality(pred, y);
  CHECK(s.mse == 1.0);
  CHECK(s.r2 == doctest::Approx(1.0 - 1.0 / 1.25).epsilon(1e-15));
}

TEST_CASE("a constant target uses the variance floor 1e-12 instead of dividing by zero") {
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(5, 3.0);
  const Eigen::VectorXd pred = Eigen::VectorXd::Constant(5, 3.0 + 1e-7);
  const FitQuality s = fit_quality(pred, y);
  CHECK(s.mse == doctest::Approx(1e-14).epsilon(1e-6));
  CHECK(s.r2 == doctest::Approx(1.0 - 1e-14 / 1e-12).epsilon(1e-6));
}

TEST_CASE("population variance is two-pass: a large mean does not cancel the spread") {
  Eigen::VectorXd y(3);
  y << 1e9 + 1, 1e9 + 2, 1e9 + 3;  // variance 2/3; one-pass E[y^2] - E[y]^2 loses it entirely
  CHECK(population_variance(y) == doctest::Approx(2.0 / 3.0).epsilon(1e-9));
}
