#pragma once
// A vectorised test that every entry of a matrix is finite, for the hot paths (feature windows, training designs,
// targets). Eigen's allFinite() is a scalar loop with a branch per entry: 40% of a fixed-basis feature window.

#include <cmath>

#include <Eigen/Core>

namespace ropekit {

/// True when no entry is inf or NaN: 0 * x is +-0 for finite x and NaN otherwise, so the sum is NaN exactly
/// when some entry is not finite (IEEE arithmetic; the build never uses -ffast-math).
template <class Derived>
bool all_finite(const Eigen::DenseBase<Derived>& m) {
  return !std::isnan((m.derived().array() * 0.0).sum());
}

}  // namespace ropekit
