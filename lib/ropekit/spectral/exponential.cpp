#include "ropekit/spectral/exponential.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/vecmath.hpp"

namespace ropekit::spectral {

namespace {

// Cauchy(0, scale) by its quantile tan(pi (u - 1/2)) with an exact phase: -cot(pi u) for u < 1/4,
// cot(pi (1 - u)) for u > 3/4, tan(pi (u - 1/2)) between (u - 1/2 and 1 - u are exact there). In place.
void cauchy_from_uniform(double* w, std::size_t n, double scale) {
  double s[kPiece], c[kPiece];
  unsigned char region[kPiece];
  for (std::size_t start = 0; start < n; start += kPiece) {
    const std::size_t m = std::min(kPiece, n - start);
    double* p = w + start;
    for (std::size_t i = 0; i < m; ++i) {
      const double u = p[i];
      region[i] = u < 0.25 ? 0 : (u > 0.75 ? 2 : 1);
      p[i] = region[i] == 0 ? u : (region[i] == 2 ? 1 - u : u - 0.5);
    }
    sincospi_array(p, s, c, m);
    for (std::size_t i = 0; i < m; ++i)
      p[i] = scale * (region[i] == 1 ? s[i] / c[i] : (region[i] == 0 ? -c[i] / s[i] : c[i] / s[i]));
  }
}

}  // namespace

std::string spelling(const Exponential& e) { return with_dims("exponential:l=" + format_number(e.l), e.dims); }

void validate(const Exponential& e, std::string_view where) {
  check_scale(where, "l", e.l);
  check_dims(where, e.dims);
}

Exponential parse_family(Spelling& sp, std::string_view where, const Exponential*) {
  Exponential e;
  e.l = sp.take_double("l").value_or(1.0);
  e.dims = take_dims(sp, where);
  sp.finish("l, dims");
  return e;
}

PhiPsiVar values_at(const Exponential& e, std::span<const double> lag, bool) {
  // Phi2 = Phi^2, so Var cos u = (1 - Phi^2)/2.
  const double r = norm(lag) / e.l;
  return {std::exp(-r), -std::expm1(-r), -0.5 * std::expm1(-2 * r)};
}

double kernel_work(const Exponential& e) { return 10.0 * e.dims; }

void sample(const Exponential& e, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(e.dims);
  if (k == 1) {
    rng.fill_uniform(w, n);
    cauchy_from_uniform(w, n, 1 / e.l);
    return;
  }
  // Multivariate Cauchy: Z / |g| / l with one g per draw, shared by its k components.
  rng.fill_normal(w, n * k);
  double g[kPiece];
  for (std::size_t start = 0; start < n; start += kPiece) {
    const std::size_t m = std::min(kPiece, n - start);
    rng.fill_normal(g, m);
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t i = 0; i < m; ++i) w[j * n + start + i] /= e.l * std::abs(g[i]);
  }
}

QuantileFunction quantile_function(const Exponential& e) {
  return [l = e.l](double u) {
    double w = u;
    cauchy_from_uniform(&w, 1, 1 / l);
    return w;
  };
}

double pdf(const Exponential& e, std::span<const double> w) {
  // Multivariate Cauchy scaled by 1/l: Gamma((1+k)/2) / pi^((1+k)/2) l^k (1 + l^2 |w|^2)^(-(1+k)/2).
  const double k = static_cast<double>(w.size());
  const double r = norm(w) * e.l;
  return std::exp(std::lgamma((1 + k) / 2) - (1 + k) / 2 * std::log(M_PI) + k * std::log(e.l) -
                  (1 + k) / 2 * std::log1p(r * r));
}

std::optional<ScaleParameter> scale_parameter(const Exponential& e) {
  if (e.dims != 1) return std::nullopt;
  return ScaleParameter{"l", e.l, true};
}

std::optional<double> scale_derivative(const Exponential& e, double x) {
  const double ax = std::abs(x), scale = e.l;
  return ax / (scale * scale) * std::exp(-ax / scale);
}

Exponential wrong_density(const Exponential& e) {
  Exponential out = e;
  out.l = 1 / e.l;
  return out;
}

std::string wrong_density_note(const Exponential& e) {
  return fmt::format("Cauchy(0, l = {}) instead of Cauchy(0, 1/l)", format_number(e.l));
}

}  // namespace ropekit::spectral
