#include "ropekit/fit/tuning_scan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <queue>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

std::vector<double> scan_minima(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                double ridge, int count, int& points, const std::function<void(int, int)>& tick) {
  const double lo = t.lower[0], hi = t.upper[0], dmax = lags.cwiseAbs().maxCoeff();
  auto phase = [&](double a, double b) {
    const auto va = tunable_values<double>(t, &a), vb = tunable_values<double>(t, &b);
    double m = 0;
    for (std::size_t k = 0; k < va.theta.size(); ++k) m = std::max(m, std::abs(va.theta[k] - vb.theta[k]));
    return m * dmax;
  };
  // Intervals still moving more than pi/4, smallest phase first: the basins the lags resolve are split before the
  // far end where the frequencies pass pi many times over (there the grid stops at the point budget).
  constexpr auto kMaxPoints = static_cast<std::size_t>(kScanPoints);
  using Interval = std::tuple<double, double, double>;  // (phase, a, b)
  std::priority_queue<Interval, std::vector<Interval>, std::greater<>> open;
  std::vector<double> grid{lo};
  auto add = [&](double a, double b) {
    const double ph = phase(a, b);
    if (ph > std::numbers::pi / 4 && b > a * (1 + 1e-12)) open.emplace(ph, a, b);
  };
  for (int i = 1; i < 64; ++i) {
    const double a = lo * std::pow(hi / lo, (i - 1) / 63.0), b = i == 63 ? hi : lo * std::pow(hi / lo, i / 63.0);
    grid.push_back(b);
    add(a, b);
  }
  while (!open.empty() && grid.size() < kMaxPoints) {
    const auto [ph, a, b] = open.top();
    open.pop();
    const double mid = std::sqrt(a * b);
    grid.push_back(mid);
    add(a, mid);
    add(mid, b);
  }
  std::sort(grid.begin(), grid.end());
  points = static_cast<int>(grid.size());
  std::vector<double> cost(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (i % 64 == 0) {
      check_cancelled();
      tick(static_cast<int>(i), points);
    }
    Eigen::VectorXd p(1);
    p[0] = grid[i];
    cost[i] = varpro_evaluate(t, lags, y, ridge, p, false).residual.squaredNorm();
  }
  // Local minima, lowest first, then (when there are fewer than `count`) the lowest other grid points, so that a run
  // always has the `count` scan starts its announcement counted (it ran one more than announced per minimum short).
  std::vector<std::tuple<bool, double, double>> ranked;  // (not a minimum, cost (NaN as inf), p)
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const bool minimum = std::isfinite(cost[i]) && (i == 0 || cost[i] <= cost[i - 1]) &&
                         (i + 1 == grid.size() || cost[i] <= cost[i + 1]);
    ranked.emplace_back(!minimum, std::isnan(cost[i]) ? std::numeric_limits<double>::infinity() : cost[i], grid[i]);
  }
  const auto n = std::min(ranked.size(), static_cast<std::size_t>(std::max(count, 0)));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end());
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::get<2>(ranked[i]));
  return out;
}

std::vector<std::string> agreement_notes(const TuneResult& r, const std::vector<double>& ends) {
  std::vector<std::string> notes;
  const double best_p = r.params[0], best_c = r.tuned_cost;
  std::vector<std::string> other, close;
  for (std::size_t s = 0; s < ends.size(); ++s) {
    if (std::abs(ends[s] - best_p) <= 1e-6 * std::abs(best_p) || !std::isfinite(r.starts[s].final_cost)) continue;
    other.push_back(fmt::format("start {} ({}) at {} with objective {}", s + 1, r.starts[s].kind,
                                format_significant(ends[s], 6), format_significant(r.starts[s].final_cost, 6)));
    if (r.starts[s].final_cost <= best_c + 1e-6 * std::abs(best_c)) close.push_back(fmt::format("{}", s + 1));
  }
  if (!other.empty())
    notes.push_back(fmt::format("starts disagree: the best ({}) ends at {} with objective {}; {}", r.best_start + 1,
                                format_significant(best_p, 6), format_significant(best_c, 6), fmt::join(other, "; ")));
  if (!close.empty())
    notes.push_back(fmt::format("the best start is not separated: start(s) {} end elsewhere within 1e-6 relative of "
                                "its objective (the data do not determine the parameter)", fmt::join(close, ", ")));
  return notes;
}

}  // namespace ropekit
