#pragma once
// Generator sets of N-dimensional RoPE in so(n) (spec nd-rope.md section 1): a GeneratorSet (base generators
// T_i and an optional mixing Q, as the JSON file holds them) and the families that build one.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// Largest head dimension the builders and the file reader accept (a file holds N n^2 numbers).
inline constexpr int kMaxLieDim = 1024;
/// Largest N n^2 (numbers in all generators) a set may hold.
inline constexpr double kMaxGeneratorEntries = 1 << 24;

/// Base generators, an optional mixing and a note of where they came from.
struct GeneratorSet {
  int dim = 0;                            ///< n >= 1
  std::vector<Eigen::MatrixXd> base;      ///< N >= 1 matrices, each n x n: T_i
  std::optional<Eigen::MatrixXd> mixing;  ///< n x n: Q; absent means Q = I
  std::string description;                ///< free text, e.g. the family and its parameters

  int axes() const { return static_cast<int>(base.size()); }
  /// @throws InputError for n out of [1, kMaxLieDim], no generators, a matrix that is not n x n, or a
  ///         non-finite entry; `where` names the source (a file) in the message.
  void validate(const std::string& where = "generator set") const;
  /// The acting generators B_i = Q T_i Q^T (T_i when there is no Q), each n x n.
  std::vector<Eigen::MatrixXd> acting() const;
};

// ------------------------------------------------------------------------------------------------
// Generator families (values; generators() builds them).

namespace gen {
/// Axial N-D RoPE (spec section 1, "standard"; Heo et al. 2024 RoPE-Axial): the n/2 planes are cut into
/// N contiguous groups, K_a = floor(n/2 / N) planes each (the first (n/2 mod N) groups get one more);
/// plane k of group a rotates by base^(-k/K_a) x_a (1-D RoPE on 2 K_a channels). Needs n/2 >= N.
struct Axial {
  int dim = 64;       ///< n, positive and even
  int axes = 2;       ///< N >= 1, N <= n/2
  double base = 1e4;  ///< finite, > 0
};
/// Mixed RoPE (Heo et al. 2024, RoPE-Mixed at initialisation): the planes of group g (as in Axial) rotate
/// by mag_k (u_g . x) with u_g column g of a seeded random rotation O in SO(N). For N = 2 this is
/// u_0 = (cos phi, sin phi), u_1 = (cos(phi + pi/2), sin(phi + pi/2)), phi uniform in [0, 2 pi): Heo et al.'s
/// init_random_2d_freqs. Commuting and independent; each plane mixes the axes.
struct Mixed {
  int dim = 64;
  int axes = 2;
  double base = 1e4;
  std::uint64_t seed = 1;
};
/// Maximal torus with given frequencies: T_i = diag_b(W(i, b) J), plane b = coordinates (2b, 2b+1).
struct Torus {
  Eigen::MatrixXd frequencies;  ///< rows = N >= 1, cols = n/2 >= 1, finite
};
/// LieRE-style dense generators (Ostmeier et al. 2024): T_i = scale (A_i - A_i^T) / sqrt(2n), A_i with
/// i.i.d. N(0, 1) entries (off-diagonal entries of T_i have variance scale^2 / n, |T_i|_2 ~ 2 scale).
/// Skew but, almost surely, not commuting.
struct Random {
  int dim = 8;          ///< n >= 1
  int axes = 2;         ///< N >= 1
  double scale = 1.0;   ///< finite, > 0
  std::uint64_t seed = 1;
};
/// User matrices, taken as they are (checks report what is wrong with them).
struct User {
  std::vector<Eigen::MatrixXd> matrices;  ///< N >= 1, each n x n
};
}  // namespace gen

using GeneratorFamily = std::variant<gen::Axial, gen::Mixed, gen::Torus, gen::Random, gen::User>;

/// The frequency matrix of a torus family (rows = N, cols = n/2): Axial, Mixed, Torus.
/// @throws InputError for bad parameters (named as `where` spells dim, axes, base), or for Random / User.
Eigen::MatrixXd torus_frequencies(const GeneratorFamily& family, const Where& where = Where("generator family"));

/// Generic torus frequencies, log-uniform in (1/base, 1], seeded (independent and incommensurate almost
/// surely): rows = axes, cols = dim/2. @throws InputError for an odd dim or bad parameters.
Eigen::MatrixXd random_torus_frequencies(int axes, int dim, double base, std::uint64_t seed,
                                         const Where& where = Where("torus frequencies"));

/// T_i = diag_b(W(i, b) J): N matrices, each 2 W.cols() x 2 W.cols().
std::vector<Eigen::MatrixXd> torus_generators(const Eigen::MatrixXd& frequencies);

/// Builds the family's generators (no mixing). @throws InputError naming the parameter as `where` spells it
/// (dim, axes, base, scale; a scale whose generators would overflow float64 included).
GeneratorSet generators(const GeneratorFamily& family, const Where& where = Where("generator family"));

/// Sum_i x_i B_i (the hat map of the position), n x n. x.size() must equal B.size().
Eigen::MatrixXd hat(const std::vector<Eigen::MatrixXd>& B, const Eigen::VectorXd& x);

}  // namespace ropekit
