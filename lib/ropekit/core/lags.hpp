#pragma once
// Lags: rows = lags, cols = k (the dimension of positions), the one lag type of every command, and its parser.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// rows = lags, cols = k.
using Lags = Eigen::MatrixXd;

/// Parses lags for k-dimensional positions. k = 1: numbers or ranges separated by commas ("0.5,1,2",
/// "0:1024:8"). Any k: lag vectors separated by ';', components by ',' ("1,0;0,2;3,4"); a k >= 2 list
/// without ';' is one lag vector. @throws InputError naming the lag with the wrong number of components.
Lags parse_lags(std::string_view text, int k, std::string_view what = "--lags");
/// The same with messages naming `where` (e.g. "ropekit verify master") and the option `what`.
Lags parse_lags(std::string_view text, int k, const Where& where, std::string_view what);
/// 1-D lags t that are an even grid only up to rounding (decimal input "0.1,0.2,...,6.4"; a range start + i step
/// with step not exactly t[1] - t[0]), re-anchored: t[m] = t0 + s[m] + r[m], s[m] = m h an exact grid from 0 in
/// the sense of vecmath's is_even_grid (so the angle-addition kernel dot_cos_sin_grid evaluates it), |r[m]| <=
/// delta. Offsets from t0 keep the step's own rounding at ulp(h) instead of ulp(t0) (a grid of doubles near 1
/// has steps in multiples of 2^-52, too coarse for 0.1). An exact grid comes back as t0 = 0, s = t, delta = 0.
struct NearGrid {
  double t0 = 0;          ///< the anchor, t[0] (0 for an exact grid)
  std::vector<double> s;  ///< the offsets m h; is_even_grid(s) holds
  double delta = 0;       ///< max_m |t[m] - (t0 + s[m])|, exact sums (0: t is itself an exact grid)
};
/// Residuals allowed by near_grid, in ulp of max|t|: a lag written in decimal is already up to 1/2 ulp off
/// the number meant, and the grid's own rounding adds about as much.
constexpr double kNearGridUlps = 4;
/// t as a near grid with step h = t[1] - t[0] or (t[count-1] - t[0]) / (count - 1), whichever fits better,
/// if every residual is at most kNearGridUlps ulp(max_m |t[m]|); nullopt if there is none (fewer than 2
/// lags, non-finite values, a zero step, or a residual beyond the tolerance).
std::optional<NearGrid> near_grid(std::span<const double> t);

/// 1-D lags as parse_lags(text, 1) reads them (numbers and ranges start:stop[:step], comma separated, the same
/// values in the same order), produced in blocks: memory stays proportional to the text, whatever its ranges
/// expand to, so a command can stream any number of lags. No cap on the count but what float64 can spell:
/// a range of more than 2^53 values is refused (start + i step needs i exact).
class LagStream {
 public:
  /// Checks every item before any lag is produced. @throws InputError as parse_lags, naming `where` and `what`.
  LagStream(std::string_view text, const Where& where, std::string_view what);
  /// The number of lags next() produces, counted without expanding the ranges (for cost estimates and messages).
  std::int64_t count() const { return static_cast<std::int64_t>(std::min(count_, 0x1p62)); }
  /// Writes the next lags, at most max of them, into out. @returns how many (0: the stream is done).
  std::size_t next(double* out, std::size_t max);
  /// Starts again from the first lag.
  void rewind() { item_ = 0, index_ = 0; }
  /// The items in order, each the values start + i step for i < count (a number: count 1, step 0), for searches
  /// that need not visit every value (precision's first position past a tolerance).
  struct Segment {
    double start = 0, step = 0;
    std::int64_t count = 0;
  };
  std::vector<Segment> segments() const;

 private:
  struct Item {
    double start = 0, stop = 0, step = 0;  ///< a number v: start = v, step = 0
    bool range = false;
    double count = 1;  ///< values of the item
  };
  std::vector<Item> items_;
  double count_ = 0;  ///< exact: at most 2^53 per range
  std::size_t item_ = 0;
  std::uint64_t index_ = 0;  ///< the next value's index i within the current range
};

/// The default lags of `kernel --spectrum` (last = 5) and `verify` (last = 4), as parse_lags text: 0, 0.5, 1, 2, last
/// for k = 1; for k >= 2 the origin, the first axis, twice the last axis and the diagonal (0.5, ..., 0.5).
std::string default_lag_text(int k, double last);

/// The text of one lag as parse_lags reads it: "2.5" (k = 1), "1,0" (k = 2).
std::string lag_text(std::span<const double> lag);

}  // namespace ropekit
