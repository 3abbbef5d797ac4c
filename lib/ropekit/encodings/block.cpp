#include "ropekit/encodings/block.hpp"

#include <cmath>
#include <limits>

namespace ropekit {

double trace(const Block& b) {
  const double k = b.rotary ? 2 * std::cos(b.phase) : 1.0;
  return b.repeat * k * b.order() * b.c[0];
}

double frobenius_squared(const Block& b) {
  const int m = b.order();
  double s = 0;
  for (int p = 0; p < m; ++p) s += (m - p) * b.c[p] * b.c[p];
  return b.repeat * (b.rotary ? 2.0 : 1.0) * s;
}

double trace_of_square(const Block& b) {
  // cos of the doubled phase; past DBL_MAX / 2 the doubling would overflow to inf (cos = NaN: verify content at
  // lag 1e308 printed a NaN variance and a false FAIL), and 2 cos^2 - 1 is the same number to a few eps.
  const double c2 = std::abs(b.phase) <= std::numeric_limits<double>::max() / 2
                        ? std::cos(2 * b.phase)
                        : 2 * std::cos(b.phase) * std::cos(b.phase) - 1;
  const double k = b.rotary ? 2 * c2 : 1.0;
  return b.repeat * k * b.order() * b.c[0] * b.c[0];
}

Eigen::MatrixXd dense(const Block& b) {
  const int m = b.order(), w = b.rotary ? 2 : 1;
  Eigen::MatrixXd R = Eigen::MatrixXd::Identity(w, w);
  if (b.rotary) R << std::cos(b.phase), -std::sin(b.phase), std::sin(b.phase), std::cos(b.phase);
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(w * m, w * m);
  for (int r = 0; r < m; ++r)
    for (int p = 0; r + p < m; ++p) G.block(w * r, w * (r + p), w, w) = b.c[p] * R;
  return G;
}

Eigen::MatrixXd assemble(const std::vector<Block>& blocks) {
  Eigen::Index n = 0;
  for (const auto& b : blocks) n += static_cast<Eigen::Index>(b.repeat) * b.size();
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, n);
  Eigen::Index at = 0;
  for (const auto& b : blocks) {
    const Eigen::MatrixXd one = dense(b);
    for (int r = 0; r < b.repeat; ++r, at += b.size()) G.block(at, at, b.size(), b.size()) = one;
  }
  return G;
}

}  // namespace ropekit
