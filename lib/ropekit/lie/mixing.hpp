#pragma once
// Orthogonal mixing Q of generator sets (spec nd-rope.md section 1; "Rethinking RoPE" Eqs. 28-30).

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"

namespace ropekit {

// ------------------------------------------------------------------------------------------------
// Orthogonal mixing Q (spec section 1; "Rethinking RoPE" Eqs. 28-30).

namespace mix {
/// Cayley transform, the spec's convention Q = (I - S)(I + S)^{-1}, S skew (n x n). Never has eigenvalue -1;
/// det Q = 1. Other codes write (I + S/2)(I - S/2)^{-1}: that is this map at S' = -S/2.
struct Cayley {
  Eigen::MatrixXd S;  ///< n x n, skew, finite
};
/// Matrix exponential Q = exp(S), S skew (n x n): onto SO(n).
struct Exp {
  Eigen::MatrixXd S;  ///< n x n, skew, finite
};
/// Fixed-order product of Givens rotations Q = G(0,1,a_0) G(0,2,a_1) ... G(n-2,n-1,a_last), the pairs
/// (i < j) in lexicographic order, n(n-1)/2 angles. G(i,j,a) is the identity except
/// [G_ii, G_ij; G_ji, G_jj] = [cos a, -sin a; sin a, cos a]. Order matters (the rotations do not commute).
struct Givens {
  int dim = 0;                  ///< n >= 1
  std::vector<double> angles;   ///< n(n-1)/2 finite angles
};
}  // namespace mix

using Mixing = std::variant<mix::Cayley, mix::Exp, mix::Givens>;

enum class MixingKind { cayley, exp, givens };

/// "cayley", "exp", "givens". @throws InputError otherwise, naming `where`'s spelling of "mix".
MixingKind parse_mixing_kind(const std::string& name, const Where& where = Where("mixing"));
const char* to_string(MixingKind kind);

/// Q from its parameters, n x n. @throws InputError on a non-skew S, wrong sizes or non-finite values.
Eigen::MatrixXd orthogonal(const Mixing& mixing);

/// Seeded parameters: S with strict upper entries i.i.d. N(0, 1) (Cayley, Exp), angles uniform in [-pi, pi)
/// (Givens).
Mixing random_mixing(MixingKind kind, int dim, std::uint64_t seed);

}  // namespace ropekit
