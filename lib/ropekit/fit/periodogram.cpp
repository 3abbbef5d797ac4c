#include "ropekit/fit/periodogram.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "ropekit/core/vecmath.hpp"

namespace ropekit {

std::vector<double> periodogram_peaks(const Eigen::VectorXd& lags, const Eigen::VectorXd& y, int count) {
  if (lags.size() < 3 || count < 1) return {};
  const double span = std::max(lags.maxCoeff() - lags.minCoeff(), 1.0);
  const int M = static_cast<int>(std::min(4096.0, std::ceil(4 * span / 2)));  // 4 points per 2 pi / span
  // Hann window over the span: side lobes 31 dB down, so that they do not pass as peaks.
  const double first = lags.minCoeff();
  const Eigen::VectorXd yc =
      (y.array() - y.mean()) * (0.5 - 0.5 * (2 * std::numbers::pi * (lags.array() - first) / span).cos());
  std::vector<double> power(static_cast<std::size_t>(M + 2), 0.0);
  Eigen::VectorXd angle(lags.size()), sin_w(lags.size()), cos_w(lags.size());
  for (int j = 1; j <= M; ++j) {
    angle = (std::numbers::pi * j / M) * lags;
    sincos_array(angle.data(), sin_w.data(), cos_w.data(), static_cast<std::size_t>(angle.size()));
    const double re = yc.dot(cos_w), im = yc.dot(sin_w);
    power[static_cast<std::size_t>(j)] = re * re + im * im;
  }
  std::vector<std::pair<double, double>> peaks;  // (power, w)
  for (int j = 1; j <= M; ++j) {
    const double P = power[static_cast<std::size_t>(j)];
    if (P > power[static_cast<std::size_t>(j - 1)] && P >= power[static_cast<std::size_t>(j + 1)])
      peaks.emplace_back(P, std::numbers::pi * j / M);
  }
  std::sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<double> out;
  for (const auto& [P, w] : peaks) {
    if (static_cast<int>(out.size()) >= count || P < 1e-2 * peaks.front().first) break;
    out.push_back(w);
  }
  return out;
}

}  // namespace ropekit
