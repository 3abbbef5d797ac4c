#pragma once
// Per-pixel-column summaries of a curve: every point lands in the column under it, which keeps its count, the
// mean of its x and y, and its min/max envelope. A plot drawn from them has at most one vertex per column whatever
// the number of points, and hides no extreme (a column's band spans every value in it).

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace ropekit {

/// A plot's x axis in data units: [lo, hi], linear or log10 (then 0 < lo).
struct XAxis {
  double lo = 0, hi = 1;
  bool log = false;
  /// Where x falls along the axis, 0 at lo and 1 at hi; NaN where x is not drawable (x <= 0 on a log axis, NaN).
  double position(double x) const;
};

/// XAxis::position with the axis' ends (their log10) worked out once, for a loop over many points.
class AxisMap {
 public:
  explicit AxisMap(const XAxis& axis);
  double operator()(double x) const {
    if (log_) return x > 0 ? (std::log10(x) - a_) / span_ : std::numeric_limits<double>::quiet_NaN();
    return (x - a_) / span_;  // NaN for a NaN x
  }

 private:
  bool log_;
  double a_, span_;  ///< the axis' start and length (in log10 on a log axis)
};

/// An axis over [lo, hi]; where hi <= lo (a single value), a span around lo: a decade either side on a log axis,
/// max(|lo|, 1) either side on a linear one.
XAxis axis_around(double lo, double hi, bool log);

/// Values held for their quantiles in bounded memory (the median line of a plot): exact up to kCapacity values; past
/// that a hierarchy of compactors (as in KLL): level h holds values of weight 2^h, and a full level is sorted and
/// every other value (alternating the offset) moves up with twice the weight. A compaction at level h moves any
/// value's weighted rank by at most 2^h, and at most n / (kCapacity 2^h) happen there, so the rank error is at most
/// H n / kCapacity for H compacting levels (H <= log2(n / kCapacity) + 1): within 4% of n for n <= 2^8 kCapacity.
class QuantileSketch {
 public:
  static constexpr std::size_t kCapacity = 128;  ///< values per level (memory: at most (H + 1) kCapacity doubles)
  void add(double y);
  std::int64_t count() const { return count_; }
  /// The smallest held value whose weighted rank (values at or below it, from 1) reaches `rank` in [1, count]:
  /// the exact order statistic while count <= kCapacity. NaN when empty.
  double at_rank(double rank) const;
  /// The bound on |at_rank's true rank - rank|: sum over levels of compactions x 2^h (<= H n / kCapacity); 0 while
  /// exact.
  double rank_error() const;

 private:
  std::vector<std::vector<double>> levels_;
  std::int64_t count_ = 0;
  std::vector<std::int64_t> compactions_;  ///< per level (their parity: the offset of the next one)
};

/// The points of one column. A finite y is counted in the summaries; a non-finite y marks a gap (the curve breaks
/// there when nothing finite shares the column).
struct EnvelopeColumn {
  std::int64_t count = 0;  ///< finite points
  double x_sum = 0, y_sum = 0;
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
  // For a log y axis: the positive values' count, sum of log10 and smallest value.
  std::int64_t positive = 0;
  double log_sum = 0, min_positive = std::numeric_limits<double>::infinity();
  bool gap = false;
  QuantileSketch values;  ///< the finite y, when the envelope keeps medians (else empty)
};

/// The column's median (of its positive values when `positive_only`, for a log axis: the values <= 0 rank below
/// them all), from its sketch; NaN when there is none or the envelope keeps no medians.
double column_median(const EnvelopeColumn& c, bool positive_only);

class SeriesEnvelope {
 public:
  /// `columns` >= 1 columns of equal width along `axis`; `medians`: each column also keeps a QuantileSketch.
  /// @throws std::invalid_argument for no column or an axis that is empty, not finite or not positive when log.
  SeriesEnvelope(const XAxis& axis, int columns, bool medians = false);
  bool medians() const { return medians_; }
  void add(double x, double y);
  void add(std::span<const double> x, std::span<const double> y);
  const XAxis& axis() const { return axis_; }
  const std::vector<EnvelopeColumn>& columns() const { return columns_; }
  /// Points whose x is outside the axis or not drawable on it (not in any column).
  std::int64_t outside() const { return outside_; }

 private:
  XAxis axis_;
  AxisMap map_;
  std::vector<EnvelopeColumn> columns_;
  std::int64_t outside_ = 0;
  bool medians_ = false;
};

}  // namespace ropekit
