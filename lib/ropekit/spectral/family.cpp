#include "ropekit/spectral/family.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace ropekit::spectral {

void check_scale(std::string_view where, std::string_view name, double v) {
  check_positive(where, name, v);
  if (!(v >= 1 / kMaxMagnitude && v <= kMaxMagnitude))
    throw_bad_value(where, name, format_number(v), "in [1e-300, 1e300]: scales beyond it put frequencies or their "
                                                   "reciprocals outside float64");
}

void check_frequency(std::string_view where, std::string_view name, double v) {
  if (!(std::abs(v) <= kMaxMagnitude))
    throw_bad_value(where, name, format_number(v), "at most 1e300 in magnitude: larger frequencies leave float64 when "
                                                   "sampled, doubled or multiplied by a lag");
}

void check_dims(std::string_view where, std::int64_t k) {
  if (k < 1 || k > kMaxDims) throw_bad_value(where, "dims", std::to_string(k), fmt::format("an integer in 1..{}", kMaxDims));
}

int take_dims(Spelling& sp, std::string_view where) {
  const auto k = sp.take_int("dims");
  if (k) check_dims(where, *k);
  return k ? static_cast<int>(*k) : 1;
}

double norm(std::span<const double> x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::abs(v));
  if (m == 0) return 0;
  double s = 0;
  for (double v : x) s += (v / m) * (v / m);
  return m * std::sqrt(s);
}

double one_minus_product(const std::vector<double>& psi) {
  bool small = true;
  for (double p : psi) small = small && p < 0.5;
  if (small) {
    double log_prod = 0;
    for (double p : psi) log_prod += std::log1p(-p);
    return -std::expm1(log_prod);
  }
  double prod = 1;
  for (double p : psi) prod *= 1 - p;
  return 1 - prod;
}

// Taylor series below 0.5 (terms alternate and shrink by x^2/((2n+2)(2n+3)) <= 1/24).
double one_minus_sinc(double x) {
  x = std::abs(x);
  if (!std::isfinite(x)) return 1;
  if (x < 0.5) {
    const double x2 = x * x;
    double term = x2 / 6, sum = 0;
    for (int n = 1; n < 12; ++n) {
      sum += term;
      term *= -x2 / ((2.0 * n + 2) * (2.0 * n + 3));
    }
    return sum;
  }
  return 1 - std::sin(x) / x;
}

std::vector<double> normalised(const std::vector<double>& w) {
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<double> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out[i] = w[i] / total;
  return out;
}

std::string join(const std::vector<double>& v) {
  std::string out;
  for (double x : v) out += (out.empty() ? "" : ",") + format_number(x);
  return out;
}

std::string with_dims(std::string text, int k) { return k == 1 ? text : fmt::format("{},dims={}", text, k); }

void overflowing_phase(const std::string& spelling, std::span<const double> lag, std::string_view what) {
  throw_bad_value(fmt::format("spectrum '{}'", spelling), "lag", join(std::vector<double>(lag.begin(), lag.end())),
                  fmt::format("small enough that the phase {} is finite in float64", what));
}

CosMoments compose(const CosMoments& x, const CosMoments& y) {
  return {x.c * y.c, x.v * y.v + x.v * y.c * y.c + x.c * x.c * y.v + x.s * y.s,
          x.s * (y.v + y.c * y.c) + (x.v + x.c * x.c) * y.s};
}

}  // namespace ropekit::spectral
