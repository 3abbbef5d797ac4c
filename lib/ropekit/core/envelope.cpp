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

void QuantileSketch::add(double y) {
  ++count_;
  if (levels_.empty()) levels_.emplace_back(), compactions_.push_back(0);
  // A full level is compacted before it takes more (so kCapacity values stay exact): sorted, every other value (the
  // offset alternating per compaction) up a level with twice the weight. Levels above 0 receive kCapacity / 2
  // values at a time, so every compaction halves an even count.
  for (std::size_t h = 0; h < levels_.size() && levels_[h].size() >= kCapacity; ++h) {
    if (h + 1 == levels_.size()) levels_.emplace_back(), compactions_.push_back(0);
    auto& level = levels_[h];
    std::sort(level.begin(), level.end());
    for (auto i = static_cast<std::size_t>(compactions_[h] % 2); i < level.size(); i += 2)
      levels_[h + 1].push_back(level[i]);
    ++compactions_[h];
    level.clear();
  }
  levels_[0].push_back(y);
}

double QuantileSketch::at_rank(double rank) const {
  std::vector<std::pair<double, double>> held;  // (value, weight)
  for (std::size_t h = 0; h < levels_.size(); ++h)
    for (double v : levels_[h]) held.emplace_back(v, std::ldexp(1.0, static_cast<int>(h)));
  if (held.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(held.begin(), held.end());
  double seen = 0;
  for (const auto& [v, w] : held)
    if ((seen += w) >= rank) return v;
  return held.back().first;
}

double QuantileSketch::rank_error() const {
  double bound = 0;  // each compaction at level h moves a weighted rank by at most 2^h
  for (std::size_t h = 0; h < compactions_.size(); ++h)
    bound += static_cast<double>(compactions_[h]) * std::ldexp(1.0, static_cast<int>(h));
  return bound;
}

double column_median(const EnvelopeColumn& c, bool positive_only) {
  const std::int64_t n = positive_only ? c.positive : c.count;
  if (n == 0 || c.values.count() != c.count) return std::numeric_limits<double>::quiet_NaN();
  // The lower median (rank ceil(n/2)) of the values considered; the values <= 0 come first in the order.
  const double rank = static_cast<double>(c.count - n) + std::ceil(static_cast<double>(n) / 2);
  return c.values.at_rank(rank);
}

SeriesEnvelope::SeriesEnvelope(const XAxis& axis, int columns, bool medians)
    : axis_(axis), map_(axis), medians_(medians) {
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
  if (medians_) c.values.add(y);
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
