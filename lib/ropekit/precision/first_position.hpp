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
#include <vector>

#include "ropekit/core/lags.hpp"
#include "ropekit/precision/pipeline.hpp"

namespace ropekit {

/// An upper bound on phase_errors(plan, p).phase_error_max from stage 2's roundings (fl(p), fl(theta), the rounded
/// product or ggml's running product, and theta_held - theta_exact), nondecreasing in p; +inf where the angle
/// overflows its dtype.
double phase_error_bound(const PrecisionPlan& plan, double position);

struct FirstPosition {
  std::string quantity;            ///< "phase_error_max" or "score_rms_rel_error"
  std::optional<double> lag;       ///< score: the lag
  double tolerance = 0;
  std::optional<double> position;  ///< none: the tolerance is not exceeded at any position given
  double value = 0;                ///< the quantity at `position` (none: the largest value evaluated)
  std::int64_t evaluated = 0;      ///< positions evaluated
  std::string search;              ///< "exact" or "bisection"
};

/// The first position whose phase_error_max exceeds `tolerance` (or is NaN). Interruptible.
FirstPosition first_phase_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance);

/// A first position where the score RMS relative error at `lag` exceeds `tolerance` (score.hpp's Monte Carlo with
/// `trials`, `seed`): within each segment, 16 positions per octave, then bisection. Interruptible.
FirstPosition first_score_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance, double lag, std::int64_t trials, std::uint64_t seed);

}  // namespace ropekit
