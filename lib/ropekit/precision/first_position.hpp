#pragma once
// The first position at which a pipeline's error exceeds a tolerance (spec precision.md section 2), over positions
// given as segments (numbers and ranges start + i step, core/lags.hpp), without evaluating every position of a long
// range:
//   phase error (exact): a bound on stage 2's roundings, nondecreasing in p, excludes every position before the
//     first one where it reaches the tolerance (found by bisection); from there the positions are evaluated in
//     order, so the answer is the first position whose phase_error_max exceeds the tolerance;
//   score error (bisection): the RMS relative score error of a lag is a Monte Carlo estimate that grows with the
//     position as the angles' ulp does; it is evaluated at 16 positions per octave of the range, then bisected
//     between the last one within the tolerance and the first one past it: the first crossing of the growth curve
//     at that resolution, not a scan of every position.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/lags.hpp"
#include "ropekit/precision/pipeline.hpp"

namespace ropekit {

/// An upper bound on phase_errors(plan, p).phase_error_max from stage 2's roundings (fl(p), fl(theta), the rounded
/// product or ggml's running product, and theta_held - theta_exact), nondecreasing in p; +inf where the angle
/// overflows its dtype.
double phase_error_bound(const PrecisionPlan& plan, double position);

/// The per-position quantities a phase search can follow (PhaseErrors' fields): the angle's phase error, which the
/// table dtype does not change, and the two the tables carry in their dtype.
enum class PhaseQuantity { phase_error_max, table_phase_error_max, table_error_max };
std::string_view quantity_name(PhaseQuantity q);
double quantity_of(const PhaseErrors& e, PhaseQuantity q);
/// An upper bound on quantity q at position p, nondecreasing in p: phase_error_bound plus what stage 3's roundings
/// (fl32 of cos and sin, the product by fl32(a), the cast to the table dtype D) can add. Each table entry is then
/// within e = a32 2^-23 + ulp_D(a32 (1 + 2^-22)) / 2 of a32 cos(angle) (a32 = fl32(a)), so the tables' phase
/// moves by at most asin(sqrt(2) e / a32) and an entry is within e + |a32 - a| + a phase_error_bound of the exact.
double quantity_bound(const PrecisionPlan& plan, double position, PhaseQuantity q);

struct FirstPosition {
  std::string quantity;            ///< "phase_error_max" or "score_rms_rel_error"
  std::optional<double> lag;       ///< score: the lag
  double tolerance = 0;
  std::optional<double> position;  ///< none: the tolerance is not exceeded at any position given
  /// The interval of the answer: the exact search's answer itself; the score's 95% confidence interval (see
  /// first_score_position; position_high none: past the positions given).
  std::optional<double> position_low, position_high;
  double value = 0;                ///< the quantity at `position` (none: the largest value evaluated)
  std::int64_t evaluated = 0;      ///< positions evaluated
  std::string search;              ///< "exact" or "bisection"
  std::string note;                ///< what the answer comes from, where it is not the quantity's growth ("": none)
};

/// The first position whose quantity q (phase_error_max by default) exceeds `tolerance` (or is NaN). Interruptible.
FirstPosition first_phase_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance, PhaseQuantity q = PhaseQuantity::phase_error_max);

/// A first position where the score RMS relative error at `lag` exceeds `tolerance` (score.hpp's Monte Carlo with
/// `trials`, `seed`): within each segment, 16 positions per octave, then bisection. With it, the same search on the
/// ends of the RMS's 95% confidence interval (ScoreErrors::rms_rel_low / high): position_low is where the upper end
/// crosses (the earliest the true curve plausibly does), position_high where the lower end does (none: not within
/// the positions given). Evaluations are shared between the three searches. Interruptible.
FirstPosition first_score_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance, double lag, std::int64_t trials, std::uint64_t seed);

}  // namespace ropekit
