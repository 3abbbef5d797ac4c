#pragma once
// Running maximum that keeps a NaN once seen: a NaN defect must fail its verdict and show in a
// report, never vanish behind std::max (which drops NaN depending on argument order).

#include <cmath>

namespace ropekit {
inline void keep_max(double& acc, double v) {
  if (std::isnan(acc)) return;
  if (std::isnan(v) || v > acc) acc = v;
}
}  // namespace ropekit
