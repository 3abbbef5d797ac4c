// What a spectral fit reports beside its estimates (fit/spectral_fit_stats.hpp): standard errors against the
// closed form of a 3 x 2 Jacobian, a barely-resolved parameter's large error (the pseudo-inverse gave ~0), +inf for
// an unresolved one, the bound notes, and the run-time estimate's arithmetic.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ropekit/core/budget.hpp"
#include "ropekit/fit/spectral_fit_stats.hpp"

using namespace ropekit;

TEST_CASE("least_squares_std_errors: J = [1 0; 0 1; 1 1] has (J^T J)^-1 = [2 -1; -1 2] / 3") {
  Eigen::MatrixXd J(3, 2);
  J << 1, 0, 0, 1, 1, 1;
  // n - p = 1, so s^2 = rss; se_i = sqrt(rss * 2/3). Tolerance: a few roundings of a 2 x 2 SVD.
  const Eigen::VectorXd se = least_squares_std_errors(J, 0.3);
  REQUIRE(se.size() == 2);
  CHECK(se[0] == doctest::Approx(std::sqrt(0.3 * 2 / 3)).epsilon(1e-14));
  CHECK(se[1] == doctest::Approx(std::sqrt(0.3 * 2 / 3)).epsilon(1e-14));
}

TEST_CASE("least_squares_std_errors: a column scaled by c has its error scaled by 1/c, down to 1e-14") {
  // Issue 20 item 11: Matern's nu near 1e6 moves Phi by ~1e-12; the pseudo-inverse of J^T J zeroed that direction and
  // printed std_error 2.3e-19. Scaling a column of the matrix above by c multiplies its closed-form error by 1/c.
  for (double c : {1e-3, 1e-8, 1e-14}) {
    Eigen::MatrixXd J(3, 2);
    J << 1, 0, 0, c, 1, c;
    const Eigen::VectorXd se = least_squares_std_errors(J, 0.3);
    CAPTURE(c);
    CHECK(se[0] == doctest::Approx(std::sqrt(0.2)).epsilon(1e-12));
    CHECK(se[1] == doctest::Approx(std::sqrt(0.2) / c).epsilon(1e-12));
  }
}

TEST_CASE("least_squares_std_errors: a zero column or two parallel columns leave the parameters unresolved") {
  const double inf = std::numeric_limits<double>::infinity();
  Eigen::MatrixXd J(3, 2);
  J << 1, 0, 2, 0, 3, 0;
  Eigen::VectorXd se = least_squares_std_errors(J, 1.0);
  // First column alone: 1 / |col|^2 = 1/14, s^2 = 1 / (3 - 2).
  CHECK(se[0] == doctest::Approx(std::sqrt(1.0 / 14)).epsilon(1e-14));
  CHECK(se[1] == inf);
  J << 1, -2, 2, -4, 3, -6;  // col 2 = -2 col 1: only their sum direction is resolved
  se = least_squares_std_errors(J, 1.0);
  CHECK(se[0] == inf);
  CHECK(se[1] == inf);
}

TEST_CASE("bound_note: at a bound, within 2 standard errors of one, or nothing") {
  CHECK(bound_note(1e6, 1.0, 1e-3, 1e6) == "at its upper bound 1000000");
  CHECK(bound_note(1e-3, 1.0, 1e-3, 1e6) == "at its lower bound 0.001");
  CHECK(bound_note(998055, 1e4, 1e-3, 1e6) == "within 2 standard errors of its upper bound 1000000");
  CHECK(bound_note(0.5, 0.3, 1e-3, 1e6) == "within 2 standard errors of its lower bound 0.001");
  CHECK(bound_note(998055, std::numeric_limits<double>::infinity(), 1e-3, 1e6) ==
        "unresolved by the data (2 standard errors span its range [0.001, 1000000])");
  CHECK(bound_note(2.5, 0.1, 1e-3, 1e6).empty());
}

TEST_CASE("spectral_fit_seconds: iterations x evaluations x rows x work at kElementsPerSecond") {
  // Ridders: 2 + 20 P evaluations per iteration; analytic: 3. 257 rows, 201 iterations, Matern's 2000 elements.
  CHECK(spectral_fit_seconds(257, 2, false, 200, 2000) ==
        doctest::Approx(201.0 * 42 * 257 * 2000 / kElementsPerSecond).epsilon(1e-15));
  CHECK(spectral_fit_seconds(10, 1, true, 0, 11) == doctest::Approx(3.0 * 10 * 11 / kElementsPerSecond).epsilon(1e-15));
}
