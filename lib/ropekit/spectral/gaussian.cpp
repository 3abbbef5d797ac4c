#include "ropekit/spectral/gaussian.hpp"

#include <cmath>

#include <boost/math/distributions/normal.hpp>
#include <fmt/format.h>

namespace ropekit::spectral {

std::string spelling(const Gaussian& g) { return with_dims("gaussian:sigma=" + format_number(g.sigma), g.dims); }

void validate(const Gaussian& g, std::string_view where) {
  check_scale(where, "sigma", g.sigma);
  check_dims(where, g.dims);
}

Gaussian parse_family(Spelling& sp, std::string_view where, const Gaussian*) {
  Gaussian g;
  g.sigma = sp.take_double("sigma").value_or(1.0);
  g.dims = take_dims(sp, where);
  sp.finish("sigma, dims");
  return g;
}

PhiPsiVar values_at(const Gaussian& g, std::span<const double> lag, bool) {
  // Phi = e^{-h}, Phi2 = e^{-4h}: Var cos u = (1 + e^{-4h})/2 - e^{-2h} = (1 - e^{-2h})^2 / 2.
  const double r = norm(lag) / g.sigma, h = 0.5 * r * r;
  return {std::exp(-h), -std::expm1(-h), 0.5 * std::expm1(-2 * h) * std::expm1(-2 * h)};
}

double kernel_work(const Gaussian& g) { return 10.0 * g.dims; }

void sample(const Gaussian& g, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(g.dims);
  rng.fill_normal(w, n * k);
  const double scale = 1 / g.sigma;
  for (std::size_t i = 0; i < n * k; ++i) w[i] *= scale;
}

QuantileFunction quantile_function(const Gaussian& g) {
  const boost::math::normal_distribution<double> dist(0.0, 1 / g.sigma);
  return [dist](double u) { return boost::math::quantile(dist, u); };
}

double pdf(const Gaussian& g, std::span<const double> w) {
  const double k = static_cast<double>(w.size());
  const double r = norm(w) * g.sigma;
  return std::pow(g.sigma * g.sigma / (2 * M_PI), k / 2) * std::exp(-0.5 * r * r);
}

std::optional<ScaleParameter> scale_parameter(const Gaussian& g) {
  if (g.dims != 1) return std::nullopt;
  return ScaleParameter{"sigma", g.sigma, true};
}

std::optional<double> scale_derivative(const Gaussian& g, double x) {
  const double scale = g.sigma;
  return std::exp(-x * x / (2 * scale * scale)) * x * x / (scale * scale * scale);
}

Gaussian wrong_density(const Gaussian& g) {
  Gaussian out = g;
  out.sigma = 1 / g.sigma;
  return out;
}

std::string wrong_density_note(const Gaussian& g) {
  return fmt::format("N(0, sigma^2 = {}) instead of N(0, sigma^-2)", format_number(g.sigma * g.sigma));
}

}  // namespace ropekit::spectral
