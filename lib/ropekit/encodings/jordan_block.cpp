#include "ropekit/encodings/jordan_block.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

void validate(const JordanBlock& b, std::string_view where) {
  if (b.m < 1 || b.m > kMaxJordanOrder)
    throw_bad_value(where, "m", std::to_string(b.m), fmt::format("an integer in [1, {}]", kMaxJordanOrder));
  check_finite(where, "gamma", b.gamma);
  check_finite(where, "omega", b.omega);
  check_finite(where, "eta", b.eta);
}

Eigen::MatrixXd jordan_generator(const JordanBlock& b) {
  validate(b);
  const int n = 2 * b.m;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, n);
  for (int r = 0; r < b.m; ++r) {
    J.block<2, 2>(2 * r, 2 * r) << -b.gamma, -b.omega, b.omega, -b.gamma;
    if (r + 1 < b.m) J.block<2, 2>(2 * r, 2 * r + 2) = b.eta * Eigen::Matrix2d::Identity();
  }
  return J;
}

Eigen::VectorXd jordan_coefficients(const JordanBlock& b, double d, double s) {
  Eigen::VectorXd coef(b.m);
  coef[0] = std::exp(-b.gamma * d);
  const double shear = b.eta * s;
  for (int p = 1; p < b.m; ++p) coef[p] = coef[p - 1] * shear / p;
  return coef;
}

Eigen::MatrixXd jordan_exp_sheared(const JordanBlock& b, double d, double s) {
  validate(b);
  const Eigen::VectorXd coef = jordan_coefficients(b, d, s);
  const double c = std::cos(b.omega * d), sn = std::sin(b.omega * d);
  Eigen::Matrix2d R;
  R << c, -sn, sn, c;
  const int n = 2 * b.m;
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, n);
  for (int r = 0; r < b.m; ++r)
    for (int col = r; col < b.m; ++col) G.block<2, 2>(2 * r, 2 * col) = coef[col - r] * R;
  return G;
}

Eigen::MatrixXd jordan_exp(const JordanBlock& b, double d) { return jordan_exp_sheared(b, d, d); }

}  // namespace ropekit
