#pragma once
// The realified order-m complex Jordan block (Jordan-RoPE paper, sections 3.3 and 3.5; spec nd-rope.md
// section 2). Complex generator J_m = (-gamma + i omega) I + eta N_m, N_m the upper shift (N_m^m = 0), and
//   G(d) = exp(d J_m) = e^{(-gamma + i omega) d} sum_{p<m} (eta d)^p / p! N_m^p        (paper eq. 3.3).
// Realified on 2m real coordinates (complex coordinate r -> real rows 2r, 2r+1), block (r, c) of G(d) is
//   c >= r: e^{-gamma d} (eta d)^{c-r} / (c-r)! R(omega d),   R(phi) = [[cos phi, -sin phi], [sin phi, cos phi]],
//   c <  r: 0.
// Its first block row is the fixed-basis Jordan feature row (basis.hpp, method::Jordan with raw tau).
// The stabilized (bounded-tau) block keeps the damped rotation at d and puts the shear time s in the
// nilpotent factor: block (r, c) = e^{-gamma d} (eta s)^{c-r} / (c-r)! R(omega d). With s = d it is G(d).

#include <string_view>

#include <Eigen/Dense>

namespace ropekit {

/// One complex Jordan block, as a value.
struct JordanBlock {
  int m = 2;           ///< order, 1 <= m <= kMaxJordanOrder (m = 1: damped RoPE)
  double gamma = 0.0;  ///< damping, finite (>= 0 for a decaying kernel; negative is allowed)
  double omega = 1.0;  ///< rotary frequency, finite
  double eta = 0.1;    ///< nilpotent amplitude, finite
};

/// Orders above this are refused (the block is 2m x 2m and (eta d)^p / p! is formed up to p = m-1).
inline constexpr int kMaxJordanOrder = 32;

/// @throws InputError "<where>: <name> = <value> (must be ...)" for m out of range or a non-finite number.
void validate(const JordanBlock& block, std::string_view where = "Jordan block");

/// The realified generator (hat of J_m), 2m x 2m: diagonal blocks [[-gamma, -omega], [omega, -gamma]],
/// superdiagonal blocks eta I_2, zero elsewhere. exp(d * jordan_generator(b)) == jordan_exp(b, d).
Eigen::MatrixXd jordan_generator(const JordanBlock& block);

/// G(d) in closed form, 2m x 2m (block upper triangular, see the header comment).
Eigen::MatrixXd jordan_exp(const JordanBlock& block, double d);

/// The sheared block: damped rotation at d, nilpotent factor at shear time s, 2m x 2m.
/// jordan_exp_sheared(b, d, d) == jordan_exp(b, d); s = tau(d) gives the stabilized G_stab(d).
Eigen::MatrixXd jordan_exp_sheared(const JordanBlock& block, double d, double s);

/// The m scalar coefficients e^{-gamma d} (eta s)^p / p!, p = 0..m-1 (block (r, r+p) = coef[p] R(omega d)).
Eigen::VectorXd jordan_coefficients(const JordanBlock& block, double d, double s);

}  // namespace ropekit
