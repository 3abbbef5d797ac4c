#pragma once
// Seeded Monte Carlo estimation of RF-RoPE scores (spec rf-rope.md section 4): N trials, each drawing
// the D block frequencies afresh and evaluating S = sum_i A_i cos(Dp . w_i) + B_i sin(Dp . w_i) at every
// lag. Trials are cut into fixed chunks of kTrialsPerChunk, chunk c draws from Rng(seed, frequencies, c)
// and the chunks' moments merge in chunk order: the numbers depend on the seed, never on the threads.

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/spectral/rf_estimator.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

/// Count, mean and central power sums M_p = sum (x - mean)^p, p = 2..4, mergeable exactly in a fixed
/// order (Pebay 2008, eqs. 3.1 and 3.2 of the Sandia report SAND2008-6212).
struct Moments {
  double n = 0, mean = 0, M2 = 0, M3 = 0, M4 = 0;

  void add(double x);
  void merge(const Moments& other);
  double variance() const { return n > 1 ? M2 / (n - 1) : 0.0; }  ///< unbiased sample variance s^2
  double sd() const;
  double stderr_mean() const;  ///< s / sqrt(n)
  /// Standard error of s^2 from the fourth moment: sqrt((m4 - s^4 (n-3)/(n-1)) / n), m4 = M4/n.
  double stderr_variance() const;
};

/// Raw power sums of d = x - shift, shift = the first value (keeps d about one sd, so the central moments
/// below lose no digits to a large mean); one per lag within a chunk of trials.
struct ShiftedSums {
  double shift = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  double n = 0;

  void add(double x) {
    if (n == 0) shift = x;
    const double d = x - shift, d2 = d * d;
    s1 += d;
    s2 += d2;
    s3 += d2 * d;
    s4 += d2 * d2;
    n += 1;
  }
  bool finite() const { return std::isfinite(s4) && std::isfinite(shift); }
  /// The central moments of the values added (count n >= 1).
  Moments moments() const;
};

/// Runs chunk(c, out) for c = 0..chunks-1 on `threads` workers (<= 0: all), `out` holding one Moments per lag,
/// in batches of 64 chunks whose moments merge in chunk order before the next batch starts: memory stays at
/// 64 x lags moments for any number of chunks, and every number is independent of the threads. progress(fraction)
/// is called after each chunk, serialised.
std::vector<Moments> merge_chunks(std::size_t chunks, std::size_t lags, int threads,
                                  const std::function<void(std::size_t, std::vector<Moments>&)>& chunk,
                                  const std::function<void(double)>& progress);

struct McOptions {
  std::int64_t trials = 20000;        ///< N >= 2
  std::uint64_t seed = kDefaultSeed;  ///< the frequencies' stream is (seed, frequencies, chunk)
  int threads = 0;                    ///< <= 0: all hardware threads; never changes a number
  Sampling sampling = Sampling::iid;
  /// Called with the fraction of trials done, at most once per chunk, from worker threads (serialised).
  std::function<void(double)> progress;

  /// @throws InputError naming the first broken constraint, spelled by `where` (trials -> --trials).
  void validate(const Where& where = Where("Monte Carlo")) const;
};

constexpr std::int64_t kTrialsPerChunk = 256;
/// The most a near-grid shift may move a score, in eps sum_i (|A_i| + |B_i|) (see score_moments).
constexpr double kNearGridBudget = 32;

/// A 1-D lag list of at least this many lags that is a grid up to rounding is scored by the recurrence.
constexpr std::size_t kMinGridLags = 8;
/// True if score_moments may score `lags` by the grid recurrence (see below): its rows' last digits then depend on
/// the whole list, so a part of the list (a shard) does not reproduce them.
bool scores_as_grid(const Eigen::MatrixXd& lags);

/// Moments of S over N trials at each lag (rows of `lags`, cols = dims(draw)), frequencies drawn from
/// `draw` with options.sampling. A 1-D lag list on an evenly spaced grid of >= 8 lags, exact or up to
/// rounding (lags/near_grid: "0.1,0.2,...,6.4"), uses the angle-addition recurrence (vecmath
/// dot_cos_sin_grid) on that grid in every trial where moving the lags onto it changes no score by more
/// than kNearGridBudget eps sum_i (|A_i| + |B_i|); other lags and trials one sincos per (lag, block).
/// @throws InputError for bad options, a lag dimension that is not dims(draw), stratified sampling of a
/// k > 1 density, or a score that overflows (non-finite lag * frequency).
std::vector<Moments> score_moments(const Spectrum& draw, const Coefficients& c, const Eigen::MatrixXd& lags,
                                   const McOptions& options);

/// Estimated memory and run time of one score_moments call (budget.hpp): trials * blocks * lags angle
/// evaluations (times k for the dot products of k-D lags) at kAnglesPerSecond; memory for the moments of
/// up to 64 chunks per lag and, per worker thread, the frequencies of one trial (blocks * k) and the lags.
Cost monte_carlo_cost(std::int64_t trials, double blocks, double lags, int k, int threads);

/// The work of one score_moments call in angle evaluations (one cosine and one sine of the same
/// angle each): trials * blocks * lags. Throughput reports count these.
double angle_evaluations(std::int64_t trials, int blocks, Eigen::Index lags);

}  // namespace ropekit
