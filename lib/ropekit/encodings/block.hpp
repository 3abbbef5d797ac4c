#pragma once
// One block of a block-diagonal relative operator: T (x) R(phase) for a rotary block (2m x 2m), or T alone for a
// real block (m x m), T the m x m upper-triangular Toeplitz matrix with first row c_0..c_{m-1}
// (T_{r, r+p} = c_p). Rotary RoPE: m = 1, c_0 = a^2. Damped: c_0 = e^{-gamma Dp}. Jordan of order m:
// c_p = e^{-gamma Dp} (eta tau)^p / p! (Jordan-RoPE eq. 3.3). ALiBi: real, m = 2, c = (1, -slope Dp).
// Because (T (x) R)^T (T (x) R) = T^T T (x) I and (T (x) R)^2 = T^2 (x) R(2 phase), every quantity of
// spec encodings.md section 1 has a closed form per block:
//   tr G = k m c_0 cos_k,   ||G||_F^2 = k sum_p (m - p) c_p^2,   tr G^2 = k m c_0^2 cos2_k,
// with k = 2, cos_k = cos(phase), cos2_k = cos(2 phase) for a rotary block and k = 1, 1, 1 for a real one.

#include <vector>

#include <Eigen/Dense>

namespace ropekit {

struct Block {
  bool rotary = true;
  double phase = 0;       ///< the rotation angle (rotary blocks); R(phase) = [[cos, -sin], [sin, cos]]
  std::vector<double> c;  ///< c_0..c_{m-1}, m >= 1
  int repeat = 1;         ///< identical copies (e.g. the n - r identity dims of partial RoPE)

  int order() const { return static_cast<int>(c.size()); }
  int size() const { return (rotary ? 2 : 1) * order(); }  ///< one copy's rows
};

double trace(const Block& b);                ///< tr of all copies
double frobenius_squared(const Block& b);    ///< ||.||_F^2 of all copies
double trace_of_square(const Block& b);      ///< tr(G_b^2) of all copies
/// One copy as a dense matrix.
Eigen::MatrixXd dense(const Block& b);
/// The direct sum of all blocks (copies included), n x n.
Eigen::MatrixXd assemble(const std::vector<Block>& blocks);

}  // namespace ropekit
