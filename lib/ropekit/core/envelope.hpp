#pragma once
// Per-pixel-column summaries of a curve: every point lands in the column under it, which keeps its count, the
// mean of its x and y, and its min/max envelope. A plot drawn from them has at most one vertex per column whatever
// the number of points, and hides no extreme (a column's band spans every value in it).

#include <cmath>
#include <cstdint>
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
};

class SeriesEnvelope {
 public:
  /// `columns` >= 1 columns of equal width along `axis`.
  /// @throws std::invalid_argument for no column or an axis that is empty, not finite or not positive when log.
  SeriesEnvelope(const XAxis& axis, int columns);
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
};

}  // namespace ropekit
