#include "ropekit/spectral/matern.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include <fmt/format.h>

#include "ropekit/core/quiet_policy.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// e^t - 1 - t without cancellation near 0 (Taylor series below 0.5 in magnitude: the 22nd term is < 1e-22).
double expm1mx(double t) {
  if (!(std::abs(t) < 0.5)) return std::expm1(t) - t;
  double term = t * t / 2, sum = 0;
  for (int n = 3; n <= 22; ++n) {
    sum += term;
    term *= t / n;
  }
  return sum;
}

// log(1 - e^{-s}) for s > 0, accurate at both ends (Maechler's log1mexp switch at ln 2).
double log1mexp(double s) { return s < M_LN2 ? std::log(-std::expm1(-s)) : std::log1p(-std::exp(-s)); }

// s / (e^s - 1): 1 at 0, s e^{-s} for large s (no inf/inf).
double s_over_expm1(double s) {
  if (s == 0) return 1;
  if (s > 700) return std::exp(std::log(s) - s);
  return s / std::expm1(s);
}

// log of the normaliser of V's density in t = log V: nu log nu - nu - lgamma(nu), so that the density is
// exp(log_norm(nu) - nu (e^t - 1 - t)). For nu >= 10 by Stirling's series 0.5 log(nu / 2pi) - sum_k
// B_2k / (2k (2k-1) nu^(2k-1)) (8 terms: the next is < 2e-18 at nu = 10), avoiding terms of size nu log nu.
double log_norm(double nu) {
  if (nu < 10) return nu * std::log(nu) - nu - std::lgamma(nu);
  static constexpr double c[] = {1.0 / 12,    -1.0 / 360,      1.0 / 1260, -1.0 / 1680,
                                 1.0 / 1188,  -691.0 / 360360, 1.0 / 156,  -3617.0 / 122400};
  const double r = 1 / (nu * nu);
  double s = 0;
  for (int k = 7; k >= 0; --k) s = s * r + c[k];
  return 0.5 * std::log(nu / (2 * M_PI)) - s / nu;
}

constexpr double kDrop = 50;      // the integrand is cut where it is e^-50 (2e-22) below its peak
constexpr double kSaturate = 40;  // for s = a/V >= 40, 1 - e^{-s} is 1 to within e^-40 = 4e-18

// log of int_{t_min}^inf exp(f(t)) dt for a concave f with decreasing derivative df. `scale` is a lower bound on
// the width of the peak: the mode is bracketed by doubling steps of it and bisected; the support is where f is within
// kDrop of its peak (found by doubling steps out from the mode, so a narrow peak cannot be stepped over); adaptive
// Gauss-Kronrod then integrates exp(f - peak) on each side of the mode.
template <class F, class DF>
double log_integral(const F& f, const DF& df, double guess, double scale, double t_min = -kInf) {
  double mode = t_min;
  if (!(t_min > -kInf) || df(t_min) > 0) {
    double x = std::max(guess, t_min + scale), lo = x, hi = x, step = scale;
    if (df(x) > 0) {
      for (int i = 0; i < 2100; ++i, step *= 2) {
        hi = lo + step;
        if (!(df(hi) > 0)) break;
        lo = hi;
      }
    } else {
      for (int i = 0; i < 2100; ++i, step *= 2) {
        lo = std::max(t_min, hi - step);
        if (lo == t_min || df(lo) > 0) break;
        hi = lo;
      }
    }
    for (int i = 0; i < 2100 && hi - lo > 0.01 * scale; ++i) {
      const double mid = 0.5 * (lo + hi);
      (df(mid) > 0 ? lo : hi) = mid;
    }
    mode = 0.5 * (lo + hi);
  }
  const double peak = f(mode);
  if (!std::isfinite(peak)) return peak;
  auto edge = [&](double dir) {
    double step = scale;
    for (int i = 0; i < 2100; ++i, step *= 2) {
      const double t = std::max(t_min, mode + dir * step);
      if (t == t_min || !(f(t) > peak - kDrop)) return t;
    }
    return mode + dir * step;
  };
  auto g = [&](double t) { return std::exp(f(t) - peak); };
  using GK = boost::math::quadrature::gauss_kronrod<double, 61>;
  // The tolerance bounds |K61 - G30|; the Kronrod value is far more accurate than that estimate on these analytic
  // integrands. Depth 8 caps the work at 2^8 pieces a side.
  double sum = 0;
  const double left = edge(-1), right = edge(1);
  if (left < mode) sum += GK::integrate(g, left, mode, 8, 1e-13);
  sum += GK::integrate(g, mode, right, 8, 1e-13);
  return peak + std::log(sum);
}

// The three integrals over t = log V, V ~ Gamma(nu, rate nu), with s = a e^{-t} = a/V:
//   Phi     = int exp(L - nu em(t) - s) dt                         (E[e^{-a/V}])
//   1 - Phi = P(V < a/40) + int_{s<40} exp(L - nu em(t)) (1 - e^{-s}) dt
//   E[(1 - cos u)^2] = (3/2) P(V < a/40) + int_{s<40} exp(L - nu em(t)) q(s) dt,
// L = log_norm(nu), em = expm1mx, q(s) = E[(1 - cos u)^2 | V] = 3/2 - 2e^{-s} + e^{-4s}/2 = (1 - e^{-s})^2 (e^{-2s}
// + 2e^{-s} + 3)/2 (u | V ~ N(0, 2s)). Each integrand is log-concave in t. Below V = a/40 the factors 1 - e^{-s} and
// q(s) are their limits 1 and 3/2 to e^-40, so that part is the regularized incomplete gamma P(nu, nu a/40): this
// keeps the slowly decaying left tail (density ~ V^nu for small nu) out of the quadrature.
struct MaternIntegrals {
  double nu, a, log_a, L;
  bool a_normal;  // a is a normal double: s = a e^{-t} directly (exp(log a - t) would lose |log a| eps)
  // a and log a both: an a below the float64 range (lag/l < 2e-154) still counts through log a, since at small nu
  // 1 - Phi ~ a^nu is far above rounding there.
  MaternIntegrals(double nu_, double a_, double log_a_)
      : nu(nu_), a(a_), log_a(log_a_), L(log_norm(nu_)), a_normal(a_ >= DBL_MIN && a_ <= DBL_MAX) {}

  double s_at(double t) const { return a_normal && std::abs(t) < 700 ? a * std::exp(-t) : std::exp(log_a - t); }
  double t_saturate() const { return log_a - std::log(kSaturate); }
  // P(V < a/40) = P(nu, z), z = nu a/40; below the float64 range by its series z^nu / Gamma(nu + 1) (1 + O(z)).
  double head() const {
    const double log_z = std::log(nu) + t_saturate();
    if (log_z < -690) return std::exp(nu * log_z - std::lgamma(nu + 1));
    return boost::math::gamma_p(nu, std::exp(log_z), QuietPolicy());
  }
  // Below the peak width of every integrand for t <= 0 (curvature at most nu + 2 there; the Phi integrand's is
  // nu e^t + s at its mode).
  double scale_low() const { return 0.5 / std::sqrt(nu + 2); }

  double phi() const {
    auto f = [&](double t) { return L - nu * expm1mx(t) - s_at(t); };
    auto df = [&](double t) { return -nu * std::expm1(t) + s_at(t); };
    // Mode: nu e^t (e^t - 1) = a, e^t = (1 + sqrt(1 + 4q))/2, q = a/nu; curvature there nu e^t + a e^-t.
    const double log_q = log_a - std::log(nu), q = std::exp(log_q);
    const double t0 = q < 1e30 ? std::log1p(2 * q / (1 + std::sqrt(1 + 4 * q))) : 0.5 * log_q;
    const double curvature = nu * std::exp(t0) + s_at(t0);
    return std::exp(log_integral(f, df, t0, 0.5 / std::sqrt(curvature + 1)));
  }

  double one_minus_phi() const {
    auto f = [&](double t) { return L - nu * expm1mx(t) + log1mexp(s_at(t)); };
    auto df = [&](double t) { return -nu * std::expm1(t) - s_over_expm1(s_at(t)); };
    return head() + std::exp(log_integral(f, df, 0.0, scale_low(), t_saturate()));
  }

  double mean_one_minus_cos_squared() const {
    auto log_q = [](double s) {
      const double e = std::exp(-s);
      return -M_LN2 + 2 * log1mexp(s) + std::log(e * e + 2 * e + 3);
    };
    auto f = [&](double t) { return L - nu * expm1mx(t) + log_q(s_at(t)); };
    auto df = [&](double t) {  // d/dt log q(s) = -s q'(s)/q(s)
      const double s = s_at(t), e = std::exp(-s);
      return -nu * std::expm1(t) - 2 * s_over_expm1(s) + 2 * s * e * (1 + e) / (e * e + 2 * e + 3);
    };
    return 1.5 * head() + std::exp(log_integral(f, df, 0.0, scale_low(), t_saturate()));
  }
};

// Half-integer nu = p + 1/2 <= 5/2: Phi = P(x) e^{-x}.
const double* half_integer_poly(double nu, int& degree) {
  static constexpr double p05[] = {1.0}, p15[] = {1.0, 1.0}, p25[] = {1.0, 1.0, 1.0 / 3.0};
  degree = nu == 0.5 ? 0 : nu == 1.5 ? 1 : nu == 2.5 ? 2 : -1;
  return degree == 0 ? p05 : degree == 1 ? p15 : degree == 2 ? p25 : nullptr;
}

// 1 - P(x) e^{-x} for P(0) = 1: Taylor series below 0.5 (coefficients c_n = -sum_j p_j (-1)^{n-j}/(n-j)!),
// directly above (1 - Phi > 0.03 there).
double one_minus_poly_exp(const double* p, int degree, double x) {
  if (x > 800) return 1;  // P(x) e^{-x} rounds to 0 (and P(x) may overflow beyond x ~ 1e154)
  double poly = 0;
  for (int j = degree; j >= 0; --j) poly = poly * x + p[j];
  if (x >= 0.5) return 1 - poly * std::exp(-x);
  double sum = 0, xn = 1;
  for (int n = 1; n <= 24; ++n) {
    xn *= x;
    double c = 0, fact = 1;  // fact = (n - j)!
    for (int j = n; j >= 0; --j) {
      if (j <= degree) c -= p[j] * (((n - j) % 2) ? -1.0 : 1.0) / fact;
      fact *= (n - j + 1);
    }
    sum += c * xn;
  }
  return sum;
}

// Var[cos u] = (1 + Phi(2x))/2 - Phi(x)^2 for the half-integer forms, in closed forms without cancellation
// (y = 2x): nu = 1/2: (1 - e^{-y})/2; 3/2: P(3, y)/2; 5/2: (P(4, y) - e^{-y} y^4/72)/2, P the regularized lower
// incomplete gamma (1 - e^{-y} sum_{k<n} y^k/k!), from expanding the squares.
double half_integer_var_cos(int degree, double x) {
  const double y = 2 * x;
  if (degree == 0) return -0.5 * std::expm1(-y);
  if (degree == 1) return 0.5 * boost::math::gamma_p(3.0, y, QuietPolicy());
  return 0.5 * (boost::math::gamma_p(4.0, y, QuietPolicy()) - std::exp(4 * std::log(y) - y) / 72);
}

// a and log a describe the same number; a may be 0 or inf where log a is finite.
MaternValues values(double nu, double a, double log_a, bool with_var_cos, bool force_general) {
  MaternValues v;
  if (!with_var_cos) v.var_cos = kNaN;
  if (std::isnan(log_a) || std::isnan(nu)) return {kNaN, kNaN, kNaN};
  if (log_a == -kInf) return v;  // a = 0
  if (log_a == kInf) return {0, 1, with_var_cos ? 0.5 : kNaN};
  if (nu > kMaternGaussianNu) {
    v.phi = std::exp(-a);
    v.psi = -std::expm1(-a);
    if (with_var_cos) v.var_cos = 0.5 * std::expm1(-2 * a) * std::expm1(-2 * a);
    return v;
  }
  int degree = -1;
  const double* poly = force_general ? nullptr : half_integer_poly(nu, degree);
  if (poly) {
    const double x = 2 * std::exp(0.5 * (std::log(nu) + log_a));
    double p = 0;
    for (int j = degree; j >= 0; --j) p = p * x + poly[j];
    v.phi = x > 800 ? 0.0 : p * std::exp(-x);  // P(x) e^{-x} rounds to 0 there (and P(x) may overflow)
    v.psi = one_minus_poly_exp(poly, degree, x);
    if (with_var_cos) v.var_cos = half_integer_var_cos(degree, x);
    return v;
  }
  const MaternIntegrals in(nu, a, log_a);
  // Whichever of Phi and 1 - Phi is below 1/2 is integrated; the other is 1 minus it (no cancellation). The
  // likely one is tried first: Phi ~ e^{-a} for large nu, and heavier tails (small nu) only lower 1 - Phi.
  bool small_is_psi = a < 1;
  double small = small_is_psi ? in.one_minus_phi() : in.phi();
  if (small > 0.5) {
    small_is_psi = !small_is_psi;
    small = small_is_psi ? in.one_minus_phi() : in.phi();
  }
  v.psi = small_is_psi ? small : 1 - small;
  v.phi = small_is_psi ? 1 - small : small;
  // Var[cos u] = E[(1 - cos u)^2] - (1 - Phi)^2: the first term is at most 3 times the difference (3 as Phi -> 0;
  // 3/2 at small lags in the Gaussian limit; closer to 1 for small nu), so at most two bits are lost.
  if (with_var_cos) v.var_cos = std::max(0.0, in.mean_one_minus_cos_squared() - v.psi * v.psi);
  return v;
}

// a = x^2 / (4 nu) directly where that is a normal double, else through log a (no underflow or overflow of x^2).
MaternValues values_at_x(double nu, double x, bool with_var_cos, bool force_general) {
  const double a = (0.5 * x) * (0.5 * x) / nu;
  if (a >= DBL_MIN && a <= DBL_MAX) return matern_values(nu, a, with_var_cos, force_general);
  return matern_values_log(nu, 2 * std::log(0.5 * x) - std::log(nu), with_var_cos, force_general);
}

}  // namespace

MaternValues matern_values(double nu, double a, bool with_var_cos, bool force_general) {
  return values(nu, a, std::log(a), with_var_cos, force_general);
}

MaternValues matern_values_log(double nu, double log_a, bool with_var_cos, bool force_general) {
  return values(nu, std::exp(log_a), log_a, with_var_cos, force_general);
}

double matern_correlation(double nu, double x, bool force_general) {
  return values_at_x(nu, x, false, force_general).phi;
}

double matern_one_minus(double nu, double x, bool force_general) {
  return values_at_x(nu, x, false, force_general).psi;
}

double matern_var_cos(double nu, double x, bool force_general) {
  return values_at_x(nu, x, true, force_general).var_cos;
}

// ---- the Matern spectral density -----------------------------------------------------------------------------

namespace spectral {

std::string spelling(const Matern& m) {
  return with_dims(fmt::format("matern:nu={},l={}", format_number(m.nu), format_number(m.l)), m.dims);
}

void validate(const Matern& m, std::string_view where) {
  check_positive(where, "nu", m.nu);
  check_scale(where, "l", m.l);
  check_dims(where, m.dims);
}

void check_sampling(const Matern& m, std::string_view where) {
  if (m.nu < kMinSampledNu)
    throw_bad_value(where, "nu", format_number(m.nu),
                    fmt::format(">= {} for sampling: smaller nu draws frequencies beyond the float64 range", kMinSampledNu));
}

Matern parse_family(Spelling& sp, std::string_view where, const Matern*) {
  Matern m;
  m.nu = sp.take_double("nu").value_or(1.5);
  m.l = sp.take_double("l").value_or(1.0);
  m.dims = take_dims(sp, where);
  sp.finish("nu, l, dims");
  return m;
}

PhiPsiVar values_at(const Matern& m, std::span<const double> lag, bool with_var) {
  // a = |Dp|^2 / (2 l^2); below the float64 range (|Dp|/l < 2e-154) through log a, since small nu still
  // has 1 - Phi ~ a^nu far above rounding there.
  const double r = norm(lag) / m.l, a = 0.5 * r * r;
  const MaternValues v = a >= DBL_MIN || r == 0
                             ? matern_values(m.nu, a, with_var)
                             : matern_values_log(m.nu, 2 * (std::log(norm(lag)) - std::log(m.l)) - M_LN2, with_var);
  return {v.phi, v.psi, v.var_cos};
}

double kernel_work(const Matern& m) {
  const double k = m.dims;
  const bool elementary = m.nu == 0.5 || m.nu == 1.5 || m.nu == 2.5 || m.nu > kMaternGaussianNu;
  return elementary ? 10 + k : 2000 + k;
}

void sample(const Matern& m, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(m.dims);
  // w = Z / (l sqrt(V)), V = G/nu, G ~ Gamma(nu, 1). For nu >= 1, G from the batched sampler;
  // below, in logs (scale = exp(-(log G - log nu)/2) / l), since G itself may underflow.
  rng.fill_normal(w, n * k);
  double scale[kPiece];
  const double log_nu = std::log(m.nu);
  for (std::size_t start = 0; start < n; start += kPiece) {
    const std::size_t cnt = std::min(kPiece, n - start);
    if (m.nu >= 1) {
      rng.fill_gamma(m.nu, scale, cnt);
      for (std::size_t i = 0; i < cnt; ++i) scale[i] = std::sqrt(m.nu / scale[i]) / m.l;
    } else {
      // log G(nu) = log G(nu + 1) + log(U)/nu (Marsaglia-Tsang's boost), batched.
      double u[kPiece];
      rng.fill_gamma(m.nu + 1, scale, cnt);
      rng.fill_uniform(u, cnt);
      log_array(scale, scale, cnt);
      log_array(u, u, cnt);
      for (std::size_t i = 0; i < cnt; ++i) scale[i] = std::exp(-0.5 * (scale[i] + u[i] / m.nu - log_nu)) / m.l;
    }
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t i = 0; i < cnt; ++i) w[j * n + start + i] *= scale[i];
  }
}

QuantileFunction quantile_function(const Matern& m) {
  const boost::math::students_t_distribution<double> dist(2 * m.nu);
  return [dist, l = m.l](double u) { return boost::math::quantile(dist, u) / l; };
}

double pdf(const Matern& m, std::span<const double> w) {
  // Spec section 2: Gamma(nu + k/2) / (Gamma(nu) pi^(k/2)) (2nu/l^2)^nu (2nu/l^2 + |w|^2)^(-(nu + k/2)).
  // With a = 2nu/l^2, in logarithms that stay finite for any nu: nu log a - (nu + k/2) log(a + |w|^2) =
  // -(k/2) log a - (nu + k/2) log1p(|w|^2/a). log Gamma(nu + h) - log Gamma(nu), h = k/2, cancels for large
  // nu (it was inf - inf at nu = 3.5e307): there h log nu + h (h - 1)/(2 nu), whose next term is
  // O(h^3/nu^2) < 1e-21 above nu = 1e15; Boost's Gamma(nu)/Gamma(nu + h) where it is a normal number.
  const double k = static_cast<double>(w.size());
  const double log_a = M_LN2 + std::log(m.nu) - 2 * std::log(m.l), r = norm(w) * m.l, h = k / 2;
  double log_gamma_ratio = h * std::log(m.nu) + h * (h - 1) / (2 * m.nu);
  if (m.nu <= 1e15) {
    const double ratio = boost::math::tgamma_delta_ratio(m.nu, h, QuietPolicy());
    log_gamma_ratio = ratio >= DBL_MIN && std::isfinite(ratio) ? -std::log(ratio) : std::lgamma(m.nu + h) - std::lgamma(m.nu);
  }
  return std::exp(log_gamma_ratio - k / 2 * std::log(M_PI) - k / 2 * log_a - (m.nu + k / 2) * std::log1p(r * r / (2 * m.nu)));
}

std::optional<ScaleParameter> scale_parameter(const Matern& m) {
  if (m.dims != 1) return std::nullopt;
  return ScaleParameter{"l", m.l, true};
}

Matern wrong_density(const Matern& m) {
  Matern out = m;
  out.l = 1 / m.l;
  return out;
}

std::string wrong_density_note(const Matern& m) {
  return fmt::format("Student-t(2 nu) times l = {} instead of divided by l", format_number(m.l));
}

}  // namespace spectral

}  // namespace ropekit
