#include "ropekit/spectral/sinc.hpp"

#include <cmath>

#include <fmt/format.h>

namespace ropekit::spectral {

namespace {

// Sinc component, u ~ U(-x, x): Var cos u = (1 + sinc 2x)/2 - sinc^2 x = sum_{n>=2} (-1)^n (2x)^{2n} (n - 1)/(2n + 2)!
// (x^4/45 first) below x = 1, where 20 terms leave < 1e-30 relative; directly above, where the difference is at
// least 1/50 of the terms (cancellation below 50 eps).
CosMoments sinc_moments(double x) {
  x = std::abs(x);
  if (!std::isfinite(x)) return {0, 0.5, 0.5};
  const double c = x == 0 ? 1.0 : std::sin(x) / x;
  double v;
  if (x < 1) {
    const double y = 4 * x * x;  // (2x)^2
    double power = y * y, fact = 720, sum = 0;  // (2x)^{2n} and (2n + 2)! at n = 2
    for (int n = 2; n < 22; ++n) {
      sum += ((n % 2) ? -1.0 : 1.0) * power * (n - 1) / fact;
      power *= y;
      fact *= (2.0 * n + 3) * (2.0 * n + 4);
    }
    v = sum;
  } else {
    v = 0.5 * (1 + std::sin(2 * x) / (2 * x)) - c * c;
  }
  return {c, v, 0.5 * one_minus_sinc(2 * x)};
}

}  // namespace

std::string spelling(const Sinc& s) { return "sinc:W=" + join(s.W); }

void validate(const Sinc& s, std::string_view where) {
  check_dims(where, static_cast<std::int64_t>(s.W.size()));
  for (double W : s.W) check_scale(where, "W", W);
}

Sinc parse_family(Spelling& sp, std::string_view where, const Sinc*) {
  Sinc c;
  c.W = sp.take_doubles("W").value_or(std::vector<double>{1.0});
  const auto k = sp.take_int("dims");
  sp.finish("W, dims");
  if (k) {
    check_dims(where, *k);
    if (c.W.size() == 1) c.W.assign(static_cast<std::size_t>(*k), c.W.front());
    if (static_cast<std::int64_t>(c.W.size()) != *k)
      throw_bad_value(where, "W", fmt::format("{} values", c.W.size()), fmt::format("1 or dims = {} values", *k));
  }
  return c;
}

PhiPsiVar values_at(const Sinc& c, std::span<const double> lag, bool) {
  CosMoments m;
  std::vector<double> psi;
  for (std::size_t j = 0; j < lag.size(); ++j) {
    m = compose(m, sinc_moments(c.W[j] * lag[j]));
    psi.push_back(one_minus_sinc(c.W[j] * lag[j]));
  }
  return {m.c, one_minus_product(psi), m.v};
}

double kernel_work(const Sinc& s) { return 10.0 * static_cast<double>(s.W.size()); }

void sample(const Sinc& c, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = c.W.size();
  rng.fill_uniform(w, n * k);
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t i = 0; i < n; ++i) w[j * n + i] = c.W[j] * (2 * w[j * n + i] - 1);
}

QuantileFunction quantile_function(const Sinc& c) {
  return [W = c.W[0]](double u) { return W * (2 * u - 1); };
}

double pdf(const Sinc& c, std::span<const double> w) {
  double p = 1;
  for (std::size_t j = 0; j < w.size(); ++j) p *= std::abs(w[j]) <= c.W[j] ? 0.5 / c.W[j] : 0.0;
  return p;
}

std::optional<ScaleParameter> scale_parameter(const Sinc& s) {
  if (s.W.size() != 1) return std::nullopt;
  return ScaleParameter{"W", s.W[0], false};
}

std::optional<double> scale_derivative(const Sinc& s, double x) {
  const double scale = s.W[0];
  const double z = scale * x;
  if (z == 0) return 0.0;
  return (std::cos(z) - std::sin(z) / z) / scale;
}

Sinc wrong_density(const Sinc& s) {
  Sinc out = s;
  for (double& W : out.W) W = 1 / W;
  return out;
}

std::string wrong_density_note(const Sinc&) { return "U(-1/W, 1/W) instead of U(-W, W)"; }

}  // namespace ropekit::spectral
