#pragma once
// Helpers shared by the lie/ sources, not part of the public API (ropekit::lie_detail).

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/lie/encoder.hpp"
#include "ropekit/lie/generators.hpp"

namespace ropekit::lie_detail {

inline constexpr double kEps = std::numeric_limits<double>::epsilon();

/// n in [1, kMaxLieDim] (even for a torus). @throws InputError naming `where`'s spelling of "dim".
void check_dim(const Where& where, int n, bool even);

inline void check_matrix_finite(std::string_view where, std::string_view name, const Eigen::MatrixXd& M) {
  for (Eigen::Index j = 0; j < M.cols(); ++j)
    for (Eigen::Index i = 0; i < M.rows(); ++i)
      if (!std::isfinite(M(i, j)))
        throw_bad_value(where, fmt::format("{}[{}][{}]", name, i, j), format_number(M(i, j)), "finite");
}

inline double spectral_norm(const Eigen::MatrixXd& M) {
  if (M.size() == 0) return 0;
  Eigen::BDCSVD<Eigen::MatrixXd> svd(M);
  return svd.singularValues()[0];
}

inline double orthogonality_defect(const Eigen::MatrixXd& Q) {
  const Eigen::MatrixXd D = Q.transpose() * Q - Eigen::MatrixXd::Identity(Q.rows(), Q.cols());
  const double d = D.norm();
  return std::isfinite(d) ? d : D.stableNorm();  // squares overflow beyond |D|_F ~ 1e154
}
inline double orthogonality_tolerance(Eigen::Index n) { return 16.0 * static_cast<double>(n) * kEps; }

/// Q's products and det Q stay finite (encoder.cpp). @throws InputError naming `where`.
void check_mixing_range(const GeneratorSet& set, const std::string& where);

/// |B_i|_2 of the acting generators, +inf if B_i is not finite (encoder.cpp).
std::vector<double> spectral_norms(const Encoder& enc, bool cheap);

// sum_i |x_i| |B_i|_2 <= max_position_scale(n) for every row x of `positions`; the first row that breaks it, or -1.
// Tries the cheap bound |B_i|_2 <= |B_i|_F first; the exact norms (SVD, or the torus frequencies) only if needed.
struct ScaleCheck {
  Eigen::Index row = -1;
  double scale = 0, largest_norm = 0;
};
ScaleCheck find_unresolvable(const Encoder& enc, const Eigen::MatrixXd& positions);

}  // namespace ropekit::lie_detail
