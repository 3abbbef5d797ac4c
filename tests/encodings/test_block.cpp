// The closed-form block traces of lib/ropekit/encodings/block.hpp at the extremes of the phase.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ropekit/encoding.hpp"

using namespace ropekit;

TEST_CASE("content variance at lags up to 1.7e308 is finite and equals the dense operator's") {
  // The doubled phase of tr G^2 overflowed to inf past 8.99e307 (cos(inf) = NaN): verify content printed a NaN
  // variance and a false FAIL at lag 1e308. Independent route: ||G||_F^2 + rho^2 tr(G G) of the dense G, built
  // from cos and sin of the (finite) phase alone.
  for (const char* text : {"rope:dim=8", "damped:dim=4,gamma=0", "jordan:m=2,dim=4,gamma=0,tau=bounded"}) {
    const Encoding e = parse_encoding(text);
    for (double lag : {1e308, 1.7e308, -1.7e308, 8.98846567431158e307}) {
      CAPTURE(text);
      CAPTURE(lag);
      Lags lags(1, 1);
      lags(0, 0) = lag;
      const double rho = 0.5;
      const auto row = kernel_rows(e, lags, rho).front();
      const Eigen::MatrixXd G = relative_operator(e, std::vector<double>{lag});
      const double dense = G.squaredNorm() + rho * rho * (G * G).trace();
      REQUIRE(std::isfinite(row.content_variance));
      // n cosines of phases near 1e308 rounded once: a few eps of n
      CHECK(row.content_variance == doctest::Approx(dense).epsilon(1e-13).scale(G.rows()));
    }
  }
}
