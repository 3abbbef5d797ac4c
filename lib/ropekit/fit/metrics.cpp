#include "ropekit/fit/metrics.hpp"

#include <algorithm>
#include <stdexcept>

namespace ropekit {

double population_variance(const Eigen::Ref<const Eigen::VectorXd>& y) {
  const double mean = y.mean();
  return (y.array() - mean).square().mean();
}

FitQuality fit_quality(const Eigen::Ref<const Eigen::VectorXd>& pred, const Eigen::Ref<const Eigen::VectorXd>& y) {
  if (pred.size() != y.size() || y.size() == 0) throw std::logic_error("ropekit::score: size mismatch or empty");
  FitQuality s;
  s.mse = (pred - y).squaredNorm() / static_cast<double>(y.size());
  s.r2 = 1.0 - s.mse / std::max(population_variance(y), kVarianceFloor);
  return s;
}

}  // namespace ropekit
