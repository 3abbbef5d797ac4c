#include "ropekit/encodings/long_term_decay.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "ropekit/core/error.hpp"

namespace ropekit {

double long_term_decay_bound(const Eigen::VectorXd& theta, double lag) {
  constexpr const char* where = "ropekit::long_term_decay_bound";
  if (theta.size() == 0) throw_bad_value(where, "theta", "0 frequencies", "at least one frequency");
  check_finite(where, "lag", lag);
  std::vector<double> t(theta.data(), theta.data() + theta.size());
  for (double v : t) check_finite(where, "theta", v);
  std::sort(t.begin(), t.end(), std::greater<>());
  // S_j for j = 1..D: the running sum after adding term j - 1.
  double re = 0, im = 0, sum = 0;
  for (double w : t) {
    const double phase = lag * w;
    re += std::cos(phase);
    im += std::sin(phase);
    sum += std::hypot(re, im);
  }
  return sum / static_cast<double>(t.size());
}

}  // namespace ropekit
