#include "ropekit/core/envelope.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace ropekit {

double XAxis::position(double x) const { return AxisMap(*this)(x); }

AxisMap::AxisMap(const XAxis& axis)
    : log_(axis.log),
      a_(axis.log ? std::log10(axis.lo) : axis.lo),
      span_(axis.log ? std::log10(axis.hi) - std::log10(axis.lo) : axis.hi - axis.lo) {}

XAxis axis_around(double lo, double hi, bool log) {
  if (hi > lo) return XAxis{lo, hi, log};
  if (log) return XAxis{lo / 10, lo * 10, true};
  const double w = std::max(std::fabs(lo), 1.0);
  return XAxis{lo - w, lo + w, false};
}

SeriesEnvelope::SeriesEnvelope(const XAxis& axis, int columns) : axis_(axis), map_(axis) {
  if (columns < 1) throw std::invalid_argument(fmt::format("SeriesEnvelope: {} columns (at least 1)", columns));
  if (!(std::isfinite(axis.lo) && std::isfinite(axis.hi) && axis.hi > axis.lo && (!axis.log || axis.lo > 0)))
    throw std::invalid_argument(fmt::format("SeriesEnvelope: axis [{}, {}]{} is not a drawable range", axis.lo,
                                            axis.hi, axis.log ? " (log)" : ""));
  columns_.resize(static_cast<std::size_t>(columns));
}

void SeriesEnvelope::add(double x, double y) {
  const double u = map_(x);
  if (!(u >= 0 && u <= 1)) {
    ++outside_;
    return;
  }
  // Column floor(u n), the right end x = hi in the last column.
  const auto n = columns_.size();
  auto& c = columns_[std::min(n - 1, static_cast<std::size_t>(u * static_cast<double>(n)))];
  if (!std::isfinite(y)) {
    c.gap = true;
    return;
  }
  ++c.count;
  c.x_sum += x;
  c.y_sum += y;
  c.min = std::min(c.min, y);
  c.max = std::max(c.max, y);
  if (y > 0) {
    ++c.positive;
    c.log_sum += std::log10(y);
    c.min_positive = std::min(c.min_positive, y);
  }
}

void SeriesEnvelope::add(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size())
    throw std::invalid_argument(fmt::format("SeriesEnvelope::add: {} x against {} y", x.size(), y.size()));
  for (std::size_t i = 0; i < x.size(); ++i) add(x[i], y[i]);
}

}  // namespace ropekit
