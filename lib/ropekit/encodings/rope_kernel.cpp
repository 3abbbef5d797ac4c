#include "ropekit/encodings/rope_kernel.hpp"

#include <cmath>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/core/trig_integrals.hpp"

namespace ropekit {

void RopeGrid::validate() const {
  const char* where = "RoPE grid";
  if (dim < 2 || dim % 2) throw_bad_value(where, "dim", std::to_string(dim), "a positive even integer");
  if (dim > (1 << 24)) throw_bad_value(where, "dim", std::to_string(dim), "at most 2^24");
  if (!(base > 1) || !std::isfinite(base)) throw_bad_value(where, "base", format_number(base), "finite and > 1");
}

std::vector<double> RopeGrid::frequencies() const {
  validate();
  std::vector<double> theta(static_cast<std::size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) theta[static_cast<std::size_t>(i)] = geometric_frequency(base, i, dim);
  return theta;
}

RopeKernelValues rope_kernel(const RopeGrid& grid, double lag) { return rope_kernel(grid, grid.frequencies(), lag); }

RopeKernelValues rope_kernel(const RopeGrid& grid, const std::vector<double>& theta, double lag) {
  check_finite("RoPE kernel", "lag", lag);
  RopeKernelValues v;
  double c = 0, s = 0;
  for (double t : theta) {
    c += std::cos(t * lag);
    s += std::sin(t * lag);
  }
  const double D = static_cast<double>(theta.size()), lnB = std::log(grid.base);
  v.kernel = c / D;
  v.sine_residual = s / D;
  v.continuum = 1 - (cin(lag) - cin(lag / grid.base)) / lnB;
  v.continuum_sine = (si(lag) - si(lag / grid.base)) / lnB;
  return v;
}

}  // namespace ropekit
