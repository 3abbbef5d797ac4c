#pragma once
// Generators of N-dimensional RoPE in so(n) and the Lie-algebra checks of spec nd-rope.md section 1
// ("Rethinking RoPE", Liu & Zhou 2025, sections 2.4 and 4-5: Eqs. 21-23 and 25-30, restated in the spec).
//   R(x) = exp(sum_i x_i B_i),  x in R^N (positions),  B_i n x n.
//   Relativity  R(x1)^T R(x2) = R(x2 - x1) for all x1, x2  <=>  B_i^T = -B_i and [B_i, B_j] = 0.
//   Reversibility  x -> R(x) injective on a window; needs the B_i linearly independent, hence N <= floor(n/2).
// A commuting skew set is B_i = Q T_i Q^T with Q orthogonal and T_i = diag_b(w_ib J) on the maximal torus,
// J = [[0, -1], [1, 0]], so that R(x) = Q diag_b(R(w_b . x)) Q^T in closed form.
//
// A GeneratorSet stores the base generators T_i and an optional mixing Q, as the JSON file does
// (generator_io.hpp); the generators that act are B_i = Q T_i Q^T (spec: "orthogonal mixing").
// Norms: |.|_F is the Frobenius norm, |.|_2 the spectral norm; eps = 2^-52.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/budget.hpp"
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

// ------------------------------------------------------------------------------------------------
// R(x) and the induced kernel.

enum class Route {
  automatic,    ///< closed form when available, else matrix exponential
  closed_form,  ///< Q diag_b(R(w_b . x)) Q^T; only for a torus with an orthogonal (or no) Q
  matrix_exp,   ///< exp(sum_i x_i B_i) by Eigen's MatrixFunctions (scaling and squaring, Pade 13)
};

/// Precomputes B_i = Q T_i Q^T and, when the T_i are exactly on the maximal torus and Q is orthogonal to
/// the tolerance of LieCheck::orthogonal, the frequencies for the closed form.
class Encoder {
 public:
  /// @throws InputError if the set is invalid.
  explicit Encoder(const GeneratorSet& set);

  /// R(x), n x n. @throws InputError for x.size() != N, or Route::closed_form without a closed form.
  Eigen::MatrixXd operator()(const Eigen::VectorXd& x, Route route = Route::automatic) const;
  /// Phi(dx) = tr R(dx) / n; closed form (2/n) sum_b cos(w_b . dx) on the torus.
  double kernel(const Eigen::VectorXd& dx, Route route = Route::automatic) const;

  bool has_closed_form() const { return frequencies_.has_value(); }
  const std::optional<Eigen::MatrixXd>& frequencies() const { return frequencies_; }  ///< N x n/2
  const std::vector<Eigen::MatrixXd>& acting() const { return acting_; }
  int dim() const { return dim_; }
  int axes() const { return static_cast<int>(acting_.size()); }
  /// The route that `route` resolves to. @throws InputError for closed_form without a closed form, naming
  /// `where`'s spelling of "route".
  Route resolve(Route route, const Where& where = Where("generator encoder")) const;

 private:
  int dim_ = 0;
  std::vector<Eigen::MatrixXd> acting_;      // B_i, n x n
  std::optional<Eigen::MatrixXd> mixing_;    // Q, n x n
  std::optional<Eigen::MatrixXd> frequencies_;
};

/// The largest scale s = sum_i |x_i| |B_i|_2 of a position x (or offset) that the float64 checks can resolve:
/// 1 / (16 sqrt(n) eps). Beyond it rounding of the phases (about s eps) is no longer small against the
/// 1/sqrt(n) resolution of Phi = tr R / n, and the relativity tolerance 32 n eps (1 + s) exceeds 2 sqrt(n),
/// the largest defect orthogonal R can show, so relativity could not fail.
double max_position_scale(int n);

/// Estimated memory and run time of induced_kernel for `rows` offsets (budget.hpp): per offset the
/// closed form's N n/2 phases, or one matrix exponential of about (10 + squarings) 2 n^3 flops.
Cost induced_kernel_cost(const GeneratorSet& set, double rows, double max_offset, Route route);

/// The checks induced_kernel makes before any work: a valid set with a usable Q, the route, and every offset's
/// scale sum_i |dx_i| |B_i|_2 within max_position_scale(n). @throws InputError naming "offsets" or "route" as
/// `where` spells them.
void check_offsets(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route, const Where& where);

/// Phi at each row of offsets (rows = K, cols = N): K values. @throws InputError as check_offsets.
Eigen::VectorXd induced_kernel(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route = Route::automatic,
                               const Where& where = Where("induced kernel"));

/// The frequencies W (N x n/2) if every T_i is exactly diag_b(w J) (entries outside the 2x2 diagonal blocks
/// zero, each block [[0, -w], [w, 0]] to the bit), else nullopt.
std::optional<Eigen::MatrixXd> detect_torus(const std::vector<Eigen::MatrixXd>& T);

// ------------------------------------------------------------------------------------------------
// The checks (spec section 1, "Checks a tool can run").

struct LieCheckOptions {
  int window = 32;                    ///< W >= 2: positions x in {0, ..., W-1}^N
  int pairs = 256;                    ///< >= 1 sampled (x1, x2) pairs for the relativity defect
  std::int64_t max_exp = 2048;        ///< >= 1 matrix exponentials for the reversibility scan (cost cap)
  std::int64_t max_differences = 1 << 20;  ///< >= 1 closed-form differences for the reversibility scan
  std::uint64_t seed = 0x5EED;        ///< the deterministic sample of pairs and positions
  Route route = Route::automatic;
  /// Called with the fraction of the estimated work done (from worker threads, serialised); may be empty.
  std::function<void(double)> progress;

  /// @throws InputError naming the option, spelled by `where` (max_exp -> --max-exp).
  void validate(const Where& where = Where("Lie check options")) const;
};

/// Every number of the checks and the verdicts. Thresholds (stated in README and the reports):
///   skew        max_i |B_i + B_i^T|_F        <= 16 n eps max_i |B_i|_F
///   commuting   max_{i<j} |[B_i, B_j]|_F      <= 16 n eps max_i |B_i|_F^2
///   independent rank{vec B_i} = N, rank counting singular values > max(n^2, N) eps sigma_max
///   relativity  max_pairs |R(x1)^T R(x2) - R(x2 - x1)|_F <= 32 n eps (1 + s), s = (W-1) sum_i |B_i|_2
///   reversibility  independent and min_{x != y} |R(x) - R(y)|_F > the relativity tolerance
///   orthogonal  |Q^T Q - I|_F <= 16 n eps (only when there is a Q)
struct LieCheck {
  int dim = 0, axes = 0, window = 0;
  int masa_bound = 0;              ///< floor(n/2), the dimension of a MASA of so(n)
  std::string route;               ///< "closed-form torus" or "matrix exponential"

  double skew_defect = 0, skew_tolerance = 0;
  double max_commutator = 0, commutator_tolerance = 0;
  int rank = 0;
  double rank_tolerance = 0;
  std::vector<double> singular_values;  ///< of the n^2 x N matrix [vec B_1 ... vec B_N], descending

  bool has_mixing = false;
  double orthogonality_defect = 0, orthogonality_tolerance = 0, det_q = 1;

  double relativity_defect = 0, relativity_tolerance = 0;
  double window_scale = 0;         ///< s = (W-1) sum_i |B_i|_2
  int pairs_checked = 0;

  double min_position_distance = 0;
  std::vector<int> closest_x, closest_y;     ///< a pair of window positions at that distance
  std::int64_t distances_checked = 0;
  bool distances_exhaustive = false;  ///< every pair of distinct window positions was covered
  std::string distance_method;        ///< how the scan was done (differences or pairwise, sampled or not)

  bool skew = false, commuting = false, independent = false, within_masa_bound = false;
  bool relativity = false, reversibility = false, orthogonal = true;

  /// A few lines for a terminal.
  std::string brief_report() const;
};

/// Estimated memory and run time of check(set, options) (budget.hpp), counting flops: the commutators, the
/// singular values, R(x) per relativity pair (3 evaluations: closed form, with Q two n^3 products, or a
/// matrix exponential of about (8 + squarings) n^3 products) and the reversibility scan's evaluations.
Cost lie_check_cost(const GeneratorSet& set, const LieCheckOptions& options);

/// The checks check() makes before any work: options, set, Q, route, budget, and the window scale.
/// @throws InputError as check().
void check_lie_inputs(const GeneratorSet& set, const LieCheckOptions& options, const Where& where);

/// Runs every check. @throws InputError for an invalid set or options (named by `where`), a mixing Q whose
/// products or determinant would overflow float64, generators whose window scale (W - 1) sum_i |B_i|_2
/// exceeds max_position_scale(n), or work beyond the budget (lie_check_cost).
LieCheck check(const GeneratorSet& set, const LieCheckOptions& options = {},
               const Where& where = Where("Lie check"));

}  // namespace ropekit
