#include "ropekit/spectral/cauchy.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/vecmath.hpp"

namespace ropekit::spectral {

namespace {

// Cauchy component at x = Dp_j / b, y = x^2: Phi = 1/(1 + y), Phi2 = 1/(1 + 4y), and (1 + Phi2)/2 - Phi^2 reduces
// exactly to y^2 (5 + 2y) / ((1 + 4y)(1 + y)^2); above y = 1 each form is written in r = 1/y so nothing overflows.
CosMoments cauchy_moments(double x) {
  const double y = x * x;
  if (y <= 1) return {1 / (1 + y), y * y * (5 + 2 * y) / ((1 + 4 * y) * (1 + y) * (1 + y)), 2 * y / (1 + 4 * y)};
  const double r = 1 / y;
  return {r / (1 + r), (5 * r + 2) / ((r + 4) * (r + 1) * (r + 1)), 2 / (r + 4)};
}

// Laplace(0, scale) by its quantile: scale log(2u) for u < 1/2, -scale log(2(1 - u)) above
// (1 - u is exact there), so the tails keep full relative accuracy for any u in (0, 1). In place.
void laplace_from_uniform(double* w, std::size_t n, double scale) {
  double sign[kPiece];
  for (std::size_t start = 0; start < n; start += kPiece) {
    const std::size_t m = std::min(kPiece, n - start);
    double* p = w + start;
    for (std::size_t i = 0; i < m; ++i) {
      const double u = p[i];
      sign[i] = u < 0.5 ? scale : -scale;
      p[i] = u < 0.5 ? 2 * u : 2 * (1 - u);
    }
    log_array(p, p, m);
    for (std::size_t i = 0; i < m; ++i) p[i] *= sign[i];
  }
}

}  // namespace

std::string spelling(const Cauchy& c) { return with_dims("cauchy:b=" + format_number(c.b), c.dims); }

void validate(const Cauchy& c, std::string_view where) {
  check_scale(where, "b", c.b);
  check_dims(where, c.dims);
}

Cauchy parse_family(Spelling& sp, std::string_view where, const Cauchy*) {
  Cauchy c;
  c.b = sp.take_double("b").value_or(1.0);
  c.dims = take_dims(sp, where);
  sp.finish("b, dims");
  return c;
}

PhiPsiVar values_at(const Cauchy& c, std::span<const double> lag, bool) {
  CosMoments m;
  std::vector<double> psi;  // 1 - 1/(1 + y) = y/(1 + y) per component
  for (double d : lag) {
    m = compose(m, cauchy_moments(d / c.b));
    const double y = (d / c.b) * (d / c.b);
    psi.push_back(std::isfinite(y) ? y / (1 + y) : 1.0);
  }
  return {m.c, one_minus_product(psi), m.v};
}

double kernel_work(const Cauchy& c) { return 10.0 * c.dims; }

void sample(const Cauchy& c, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(c.dims);
  rng.fill_uniform(w, n * k);
  laplace_from_uniform(w, n * k, 1 / c.b);
}

QuantileFunction quantile_function(const Cauchy& c) {
  return [b = c.b](double u) {
    double w = u;
    laplace_from_uniform(&w, 1, 1 / b);
    return w;
  };
}

double pdf(const Cauchy& c, std::span<const double> w) {
  double p = 1;
  for (double x : w) p *= 0.5 * c.b * std::exp(-c.b * std::abs(x));
  return p;
}

std::optional<ScaleParameter> scale_parameter(const Cauchy& c) {
  if (c.dims != 1) return std::nullopt;
  return ScaleParameter{"b", c.b, true};
}

std::optional<double> scale_derivative(const Cauchy& c, double x) {
  const double scale = c.b;
  const double phi = 1 / (1 + (x / scale) * (x / scale));
  return 2 * x * x / (scale * scale * scale) * phi * phi;
}

Cauchy wrong_density(const Cauchy& c) {
  Cauchy out = c;
  out.b = 1 / c.b;
  return out;
}

std::string wrong_density_note(const Cauchy& c) {
  return fmt::format("Laplace(0, b = {}), the erratum's e^{{-|w|/b}}, instead of Laplace(0, 1/b)", format_number(c.b));
}

}  // namespace ropekit::spectral
