#pragma once
// The attention score through a pipeline (spec precision.md sections 1-2, stages 4-5): content rounded to the model
// dtype D, rotated as the framework does (transformers' apply_rotary_pos_emb: x cos + rotate_half(x) sin with
// half-split pairs i, i + n/2, every product and the sum rounded to D; ggml in fp32), and the score as fp32 products
// summed in fp32, against the exact rotation (double cos and sin of the double-double angle, double sums) of the
// same rounded content with float64 theta.

#include <cstdint>
#include <vector>

#include "ropekit/precision/pipeline.hpp"

namespace ropekit {

/// x (2 m values, m the plan's pairs; already in D) rotated to position p as the pipeline computes it.
std::vector<double> rotate_held(const PrecisionPlan& plan, const std::vector<double>& x, double position);
/// x rotated to position p exactly: a cos / a sin of p theta_exact (fill_held, within 2 ulp), in double.
std::vector<double> rotate_exact(const PrecisionPlan& plan, const std::vector<double>& x, double position);
/// <q_rot, k_rot> as the framework sums it: fp32 products added in order in fp32 (a GPU or a vectorised CPU sum
/// adds in another order: the two differ by at most n eps_32 sum |q_i k_i|).
double held_score(const std::vector<double>& q_rot, const std::vector<double>& k_rot);

/// Score errors at one lag and position over `trials` draws q, k ~ N(0, I_{2m}) rounded to D, q at p + lag and k at
/// p: e = (held - exact) / (|q~| |k~|). Draws from Rng(seed, kStreamPrecision, chunk): the same for any thread count.
/// The relativity defect (spec section 2): how far the held score moves when the same q, k sit at the origin
/// instead, (held(p + lag, p) - held(lag, 0)) / (|q~| |k~|), RMS over the same draws; an exactly relative encoding
/// has none.
/// rms_rel_low / rms_rel_high: the RMS's 95% confidence interval from the same draws, sqrt of mean(e^2) -+ 1.96 times
/// its standard error sd(e^2) / sqrt(trials) (the normal approximation of the mean of the squares; one trial: [0, inf)).
struct ScoreErrors {
  double rms_rel = 0, max_rel = 0, defect_rms = 0;
  double rms_rel_low = 0, rms_rel_high = 0;
};
ScoreErrors score_errors(const PrecisionPlan& plan, double lag, double position, std::int64_t trials, std::uint64_t seed);

constexpr std::uint64_t kStreamPrecision = 0x50'52'45'43;  // "PREC"

}  // namespace ropekit
