#include "ropekit/core/envelope.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace ropekit {

double XAxis::position(double x) const {
  if (log) return x > 0 ? (std::log10(x) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : std::nan("");
  return (x - lo) / (hi - lo);  // NaN for a NaN x
}

SeriesEnvelope::SeriesEnvelope(const XAxis& axis, int columns) : axis_(axis) {
  if (columns < 1) throw std::invalid_argument(fmt::format("SeriesEnvelope: {} columns (at least 1)", columns));
  if (!(std::isfinite(axis.lo) && std::isfinite(axis.hi) && axis.hi > axis.lo && (!axis.log || axis.lo > 0)))
    throw std::invalid_argument(fmt::format("SeriesEnvelope: axis [{}, {}]{} is not a drawable range", axis.lo,
                                            axis.hi, axis.log ? " (log)" : ""));
  columns_.resize(static_cast<std::size_t>(columns));
}

void SeriesEnvelope::add(double x, double y) {
  const double u = axis_.position(x);
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
