#pragma once
// The Lie-algebra checks of a generator set (spec nd-rope.md section 1, "Checks a tool can run"): skew,
// commuting, independent, relativity, reversibility and the mixing's orthogonality.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/lie/encoder.hpp"
#include "ropekit/lie/generators.hpp"

namespace ropekit {

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
