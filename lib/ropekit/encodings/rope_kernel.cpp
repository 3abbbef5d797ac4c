#include "ropekit/encodings/rope_kernel.hpp"

#include <algorithm>
#include <cmath>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/vecmath.hpp"
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

void rope_kernel_columns(const RopeGrid& grid, const std::vector<double>& theta, const double* lags, std::size_t n,
                         double* sine_residual, double* continuum, double* continuum_sine, bool use_grid) {
  grid.validate();
  for (std::size_t j = 0; j < n; ++j) check_finite("RoPE kernel", "lag", lags[j]);
  const double D = static_cast<double>(theta.size()), lnB = std::log(grid.base);
  if (sine_residual) {
    // (1/D) sum_i sin(theta_i Dm) with the weight 1/D folded in.
    const std::vector<double> w(theta.size(), 1 / D);
    std::fill(sine_residual, sine_residual + n, 0.0);
    add_trig_sums(TrigSum::sin, lags, n, theta.data(), w.data(), nullptr, theta.size(), sine_residual, nullptr,
                  use_grid && n >= 2 && is_even_grid(lags, n));
  }
  for (std::size_t j = 0; j < n && (continuum || continuum_sine); ++j) {
    if (j % 4096 == 0) check_cancelled();
    const double lag = lags[j];
    if (continuum) continuum[j] = 1 - (cin(lag) - cin(lag / grid.base)) / lnB;
    if (continuum_sine) continuum_sine[j] = (si(lag) - si(lag / grid.base)) / lnB;
  }
}

}  // namespace ropekit
