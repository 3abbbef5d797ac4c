#include "ropekit/spectral/spectrum.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "ropekit/spectral/matern.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/quiet_policy.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// |x|^2 and |x| without overflow for any finite components.
double norm(std::span<const double> x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::abs(v));
  if (m == 0) return 0;
  double s = 0;
  for (double v : x) s += (v / m) * (v / m);
  return m * std::sqrt(s);
}

// 1 - prod_j (1 - psi_j), accurate when every psi_j is small (all factors near 1).
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

// 1 - sin(x)/x: Taylor series below 0.5 (terms alternate and shrink by x^2/((2n+2)(2n+3)) <= 1/24).
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

void check_lag(const Spectrum& s, std::span<const double> lag) {
  if (static_cast<int>(lag.size()) != dims(s))
    throw_bad_value("ropekit::phi", "lag dimension", std::to_string(lag.size()),
                    fmt::format("k = {}, the spectrum's dims", dims(s)));
  for (double v : lag) check_finite("ropekit::phi", "lag", v);
}

std::string join(const std::vector<double>& v) {
  std::string out;
  for (double x : v) out += (out.empty() ? "" : ",") + format_number(x);
  return out;
}

// Scales (sigma, b, l, W) and frequencies (mixture mu and s, file rows) stay within 1e-300..1e300 in magnitude, so
// that sampled frequencies, their reciprocals (the power check's density) and doubled values stay in float64.
constexpr double kMaxMagnitude = 1e300;

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Identity, spelling, validation

int dims(const Spectrum& s) {
  return std::visit(Overloaded{
                        [](const spectral::Gaussian& g) { return g.dims; },
                        [](const spectral::Cauchy& c) { return c.dims; },
                        [](const spectral::Exponential& e) { return e.dims; },
                        [](const spectral::Sinc& s) { return static_cast<int>(s.W.size()); },
                        [](const spectral::Matern& m) { return m.dims; },
                        [](const spectral::Mixture& m) { return static_cast<int>(m.mu.cols()); },
                        [](const spectral::Empirical& e) { return static_cast<int>(e.w.cols()); },
                    },
                    s);
}

std::string family_name(const Spectrum& s) {
  static const char* names[] = {"gaussian", "cauchy", "exponential", "sinc", "matern", "mixture", "file"};
  return names[s.index()];
}

std::string spelling(const Spectrum& s) {
  auto with_dims = [](std::string text, int k) { return k == 1 ? text : fmt::format("{},dims={}", text, k); };
  return std::visit(
      Overloaded{
          [&](const spectral::Gaussian& g) { return with_dims("gaussian:sigma=" + format_number(g.sigma), g.dims); },
          [&](const spectral::Cauchy& c) { return with_dims("cauchy:b=" + format_number(c.b), c.dims); },
          [&](const spectral::Exponential& e) { return with_dims("exponential:l=" + format_number(e.l), e.dims); },
          [&](const spectral::Sinc& s) { return "sinc:W=" + join(s.W); },
          [&](const spectral::Matern& m) {
            return with_dims(fmt::format("matern:nu={},l={}", format_number(m.nu), format_number(m.l)), m.dims);
          },
          [&](const spectral::Mixture& m) {
            std::vector<double> mu(m.mu.data(), m.mu.data() + m.mu.size()), sd(m.s.data(), m.s.data() + m.s.size());
            // Eigen is column-major: write row by row (component by component).
            for (Eigen::Index q = 0; q < m.mu.rows(); ++q)
              for (Eigen::Index j = 0; j < m.mu.cols(); ++j) {
                mu[static_cast<std::size_t>(q * m.mu.cols() + j)] = m.mu(q, j);
                sd[static_cast<std::size_t>(q * m.mu.cols() + j)] = m.s(q, j);
              }
            return with_dims(fmt::format("mixture:weights={},mu={},s={}", join(m.weights), join(mu), join(sd)),
                             static_cast<int>(m.mu.cols()));
          },
          [&](const spectral::Empirical& e) { return "file:" + e.source; },
      },
      s);
}

void validate(const Spectrum& s, std::string_view where) {
  std::visit(Overloaded{
                 [&](const spectral::Gaussian& g) {
                   check_scale(where, "sigma", g.sigma);
                   check_dims(where, g.dims);
                 },
                 [&](const spectral::Cauchy& c) {
                   check_scale(where, "b", c.b);
                   check_dims(where, c.dims);
                 },
                 [&](const spectral::Exponential& e) {
                   check_scale(where, "l", e.l);
                   check_dims(where, e.dims);
                 },
                 [&](const spectral::Sinc& s) {
                   check_dims(where, static_cast<std::int64_t>(s.W.size()));
                   for (double W : s.W) check_scale(where, "W", W);
                 },
                 [&](const spectral::Matern& m) {
                   check_positive(where, "nu", m.nu);
                   check_scale(where, "l", m.l);
                   check_dims(where, m.dims);
                 },
                 [&](const spectral::Mixture& m) {
                   if (m.weights.empty()) throw_bad_value(where, "weights", "an empty list", "at least one weight");
                   for (double w : m.weights) check_positive(where, "weights", w);
                   check_dims(where, m.mu.cols());
                   if (m.mu.rows() != static_cast<Eigen::Index>(m.weights.size()) || m.s.rows() != m.mu.rows() ||
                       m.s.cols() != m.mu.cols())
                     throw_bad_value(where, "mu, s", fmt::format("{}x{} and {}x{}", m.mu.rows(), m.mu.cols(), m.s.rows(), m.s.cols()),
                                     fmt::format("one row of k values per component ({} components)", m.weights.size()));
                   for (Eigen::Index i = 0; i < m.mu.size(); ++i) {
                     check_frequency(where, "mu", m.mu.data()[i]);
                     check_nonnegative(where, "s", m.s.data()[i]);
                     check_frequency(where, "s", m.s.data()[i]);
                   }
                 },
                 [&](const spectral::Empirical& e) {
                   if (e.w.rows() < 1) throw_bad_value(where, "frequencies", "none", "at least one frequency vector");
                   check_dims(where, e.w.cols());
                   for (Eigen::Index i = 0; i < e.w.size(); ++i) check_frequency(where, "frequency", e.w.data()[i]);
                 },
             },
             s);
}

void check_samplable(const Spectrum& s, std::string_view where) {
  validate(s, where);
  if (const auto* m = std::get_if<spectral::Matern>(&s); m && m->nu < kMinSampledNu)
    throw_bad_value(where, "nu", format_number(m->nu),
                    fmt::format(">= {} for sampling: smaller nu draws frequencies beyond the float64 range", kMinSampledNu));
}

spectral::Empirical parse_frequency_text(std::string_view text, std::string_view source) {
  spectral::Empirical e;
  e.source = std::string(source);
  std::vector<double> values;
  std::size_t cols = 0, rows = 0, line_no = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    std::size_t n = 0;
    std::size_t pos = 0;
    while (pos < line.size()) {
      const auto start = line.find_first_not_of(" \t,", pos);
      if (start == std::string_view::npos) break;
      auto end = line.find_first_of(" \t,", start);
      if (end == std::string_view::npos) end = line.size();
      const std::string_view token = line.substr(start, end - start);
      const auto v = parse_double(token);
      if (!v || !(std::abs(*v) <= kMaxMagnitude))
        throw InputError(fmt::format("frequency file '{}' line {}: '{}' (must be a number of magnitude at most 1e300)",
                                     source, line_no, token));
      values.push_back(*v);
      ++n;
      pos = end;
    }
    if (n == 0)
      throw InputError(fmt::format("frequency file '{}' line {}: '{}' holds no number (must be a row of numbers, a blank "
                                   "line or a # comment)", source, line_no, line));
    if (rows == 0) {
      cols = n;
      if (cols > static_cast<std::size_t>(kMaxDims))
        throw InputError(fmt::format("frequency file '{}' line {}: {} columns (must be at most {})", source, line_no, n, kMaxDims));
    } else if (n != cols) {
      throw InputError(fmt::format("frequency file '{}' line {}: {} values, but the first row has {} (rows must have equal length)",
                                   source, line_no, n, cols));
    }
    ++rows;
  }
  if (rows == 0) throw InputError(fmt::format("frequency file '{}': no frequencies (must have at least one row of numbers)", source));
  e.w.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) e.w(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = values[r * cols + c];
  return e;
}

spectral::Empirical read_frequency_file(const std::string& path) {
  return parse_frequency_text(read_file(path, "frequency file"), path);
}

void check_rf_lag_range(const Where& where, std::span<const double> lags, std::string_view for_what) {
  for (double v : lags)
    if (!(std::fabs(v) <= kMaxRfLag))
      throw_bad_value(where, "lags", format_number(v),
                      fmt::format("at most {} in magnitude{}: Phi2 is evaluated at 2 Dp", format_number(kMaxRfLag),
                                  for_what));
}

Spectrum parse_spectrum(std::string_view text) {
  const std::string_view trimmed = text.substr(std::min(text.find_first_not_of(" \t"), text.size()));
  if (trimmed.rfind("file:", 0) == 0) {
    std::string path(trimmed.substr(5));
    if (path.rfind("path=", 0) == 0) path = path.substr(5);
    if (path.empty()) throw InputError(fmt::format("spectrum '{}': no file name (spelling: file:PATH)", text));
    return read_frequency_file(path);
  }
  Spelling sp = Spelling::parse(text, "spectrum");
  const std::string where = fmt::format("spectrum '{}'", sp.text());
  const std::string& f = sp.family();
  auto take_dims = [&]() {
    const auto k = sp.take_int("dims");
    if (k) check_dims(where, *k);
    return k ? static_cast<int>(*k) : 1;
  };
  Spectrum s;
  if (f == "gaussian") {
    spectral::Gaussian g;
    g.sigma = sp.take_double("sigma").value_or(1.0);
    g.dims = take_dims();
    sp.finish("sigma, dims");
    s = g;
  } else if (f == "cauchy") {
    spectral::Cauchy c;
    c.b = sp.take_double("b").value_or(1.0);
    c.dims = take_dims();
    sp.finish("b, dims");
    s = c;
  } else if (f == "exponential") {
    spectral::Exponential e;
    e.l = sp.take_double("l").value_or(1.0);
    e.dims = take_dims();
    sp.finish("l, dims");
    s = e;
  } else if (f == "sinc") {
    spectral::Sinc c;
    c.W = sp.take_doubles("W").value_or(std::vector<double>{1.0});
    const auto k = sp.take_int("dims");
    sp.finish("W, dims");
    if (k) {
      check_dims(where, *k);
      if (c.W.size() == 1) c.W.assign(static_cast<std::size_t>(*k), c.W.front());
      if (static_cast<std::int64_t>(c.W.size()) != *k)
        throw_bad_value(where, "W", fmt::format("{} values", c.W.size()), fmt::format("1 or dims = {} values", *k));
    }
    s = c;
  } else if (f == "matern") {
    spectral::Matern m;
    m.nu = sp.take_double("nu").value_or(1.5);
    m.l = sp.take_double("l").value_or(1.0);
    m.dims = take_dims();
    sp.finish("nu, l, dims");
    s = m;
  } else if (f == "mixture") {
    spectral::Mixture m;
    const auto w = sp.take_doubles("weights");
    const auto mu = sp.take_doubles("mu");
    const auto sd = sp.take_doubles("s");
    const int k = take_dims();
    sp.finish("weights, mu, s, dims");
    if (!w || !mu || !sd) throw InputError(fmt::format("{}: a mixture needs weights=, mu= and s= (e.g. mixture:weights=0.7,0.3,mu=0,2,s=0.5,0.1)", where));
    const std::size_t q = w->size(), kk = static_cast<std::size_t>(k);
    if (mu->size() != q * kk)
      throw_bad_value(where, "mu", fmt::format("{} values", mu->size()), fmt::format("{} values (k = {} per component, {} components)", q * kk, k, q));
    if (sd->size() != q && sd->size() != q * kk)
      throw_bad_value(where, "s", fmt::format("{} values", sd->size()), fmt::format("{} (one per component) or {} values", q, q * kk));
    m.weights = *w;
    m.mu.resize(static_cast<Eigen::Index>(q), k);
    m.s.resize(static_cast<Eigen::Index>(q), k);
    for (std::size_t i = 0; i < q; ++i)
      for (std::size_t j = 0; j < kk; ++j) {
        m.mu(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = (*mu)[i * kk + j];
        m.s(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = sd->size() == q ? (*sd)[i] : (*sd)[i * kk + j];
      }
    s = m;
  } else {
    throw InputError(fmt::format("unknown spectrum '{}' (known: gaussian, cauchy, exponential, sinc, matern, mixture, file:PATH)", f));
  }
  validate(s, where);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Kernels

namespace {

// Moments of one independent, symmetric component u_j of the phase of a product kernel (Cauchy, sinc):
// c = E cos u_j, v = Var cos u_j, s = E sin^2 u_j = (1 - Phi2_j)/2. For u = u_1 + u_2, E[cos u_j sin u_j] = 0 gives
// Var cos u = v1 v2 + v1 c2^2 + c1^2 v2 + s1 s2 and E sin^2 u = s1 (v2 + c2^2) + (v1 + c1^2) s2: sums of
// non-negative terms, so the variance keeps its relative accuracy at small lags, where it is O(Dp^4).
struct CosMoments {
  double c = 1, v = 0, s = 0;
};

CosMoments compose(const CosMoments& x, const CosMoments& y) {
  return {x.c * y.c, x.v * y.v + x.v * y.c * y.c + x.c * x.c * y.v + x.s * y.s,
          x.s * (y.v + y.c * y.c) + (x.v + x.c * x.c) * y.s};
}

// Cauchy component at x = Dp_j / b, y = x^2: Phi = 1/(1 + y), Phi2 = 1/(1 + 4y), and (1 + Phi2)/2 - Phi^2 reduces
// exactly to y^2 (5 + 2y) / ((1 + 4y)(1 + y)^2); above y = 1 each form is written in r = 1/y so nothing overflows.
CosMoments cauchy_moments(double x) {
  const double y = x * x;
  if (y <= 1) return {1 / (1 + y), y * y * (5 + 2 * y) / ((1 + 4 * y) * (1 + y) * (1 + y)), 2 * y / (1 + 4 * y)};
  const double r = 1 / y;
  return {r / (1 + r), (5 * r + 2) / ((r + 4) * (r + 1) * (r + 1)), 2 / (r + 4)};
}

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

// Phi, 1 - Phi and Var[cos u] at one lag (var_cos only if asked; NaN otherwise).
struct PhiPsiVar {
  double phi, psi, var_cos;
};

[[noreturn]] void overflowing_phase(const Spectrum& s, std::span<const double> lag, std::string_view what) {
  throw_bad_value(fmt::format("spectrum '{}'", spelling(s)), "lag", join(std::vector<double>(lag.begin(), lag.end())),
                  fmt::format("small enough that the phase {} is finite in float64", what));
}

PhiPsiVar values_at(const Spectrum& spectrum, std::span<const double> lag, bool with_var) {
  return std::visit(
      Overloaded{
          [&](const spectral::Gaussian& g) -> PhiPsiVar {
            // Phi = e^{-h}, Phi2 = e^{-4h}: Var cos u = (1 + e^{-4h})/2 - e^{-2h} = (1 - e^{-2h})^2 / 2.
            const double r = norm(lag) / g.sigma, h = 0.5 * r * r;
            return {std::exp(-h), -std::expm1(-h), 0.5 * std::expm1(-2 * h) * std::expm1(-2 * h)};
          },
          [&](const spectral::Exponential& e) -> PhiPsiVar {
            // Phi2 = Phi^2, so Var cos u = (1 - Phi^2)/2.
            const double r = norm(lag) / e.l;
            return {std::exp(-r), -std::expm1(-r), -0.5 * std::expm1(-2 * r)};
          },
          [&](const spectral::Cauchy& c) -> PhiPsiVar {
            CosMoments m;
            std::vector<double> psi;  // 1 - 1/(1 + y) = y/(1 + y) per component
            for (double d : lag) {
              m = compose(m, cauchy_moments(d / c.b));
              const double y = (d / c.b) * (d / c.b);
              psi.push_back(std::isfinite(y) ? y / (1 + y) : 1.0);
            }
            return {m.c, one_minus_product(psi), m.v};
          },
          [&](const spectral::Sinc& c) -> PhiPsiVar {
            CosMoments m;
            std::vector<double> psi;
            for (std::size_t j = 0; j < lag.size(); ++j) {
              m = compose(m, sinc_moments(c.W[j] * lag[j]));
              psi.push_back(one_minus_sinc(c.W[j] * lag[j]));
            }
            return {m.c, one_minus_product(psi), m.v};
          },
          [&](const spectral::Matern& m) -> PhiPsiVar {
            // a = |Dp|^2 / (2 l^2); below the float64 range (|Dp|/l < 2e-154) through log a, since small nu still
            // has 1 - Phi ~ a^nu far above rounding there.
            const double r = norm(lag) / m.l, a = 0.5 * r * r;
            const MaternValues v = a >= DBL_MIN || r == 0
                                       ? matern_values(m.nu, a, with_var)
                                       : matern_values_log(m.nu, 2 * (std::log(norm(lag)) - std::log(m.l)) - M_LN2, with_var);
            return {v.phi, v.psi, v.var_cos};
          },
          [&](const spectral::Mixture& m) -> PhiPsiVar {
            // Component q: u ~ N(+-b, 2a), a = sum_j s_qj^2 Dp_j^2 / 2, b = mu_q . Dp. Its mean of cos u is
            // e^{-a} cos b, 1 - it = -expm1(-a) cos b + 2 sin^2(b/2), and its variance (1 + e^{-4a} cos 2b)/2 -
            // e^{-2a} cos^2 b = expm1(-2a)^2/2 + sin^2 b e^{-2a} (1 - e^{-2a}). Var cos u = mean of the component
            // variances + the weighted spread of the component means (psi - psi_q)^2: all non-negative.
            const auto w = normalised(m.weights);
            const auto q_count = static_cast<std::size_t>(m.mu.rows());
            std::vector<double> phi_q(q_count), psi_q(q_count), var_q(q_count);
            double phi = 0, psi = 0;
            for (std::size_t q = 0; q < q_count; ++q) {
              double a = 0, b = 0;
              for (Eigen::Index j = 0; j < m.mu.cols(); ++j) {
                const double d = lag[static_cast<std::size_t>(j)], sd = m.s(static_cast<Eigen::Index>(q), j);
                a += 0.5 * (sd * d) * (sd * d);
                b += m.mu(static_cast<Eigen::Index>(q), j) * d;
              }
              if (std::isinf(a)) {  // the component's kernel is 0 whatever its phase
                phi_q[q] = 0, psi_q[q] = 1, var_q[q] = 0.5;
              } else {
                if (!std::isfinite(b)) overflowing_phase(spectrum, lag, "mu . Dp");
                const double h = std::sin(0.5 * b), sb = std::sin(b), e2 = std::expm1(-2 * a);
                phi_q[q] = std::exp(-a) * std::cos(b);
                psi_q[q] = -std::expm1(-a) * std::cos(b) + 2 * h * h;
                var_q[q] = 0.5 * e2 * e2 - sb * sb * std::exp(-2 * a) * e2;
              }
              phi += w[q] * phi_q[q];
              psi += w[q] * psi_q[q];
            }
            double var = 0;
            if (with_var)
              for (std::size_t q = 0; q < q_count; ++q) var += w[q] * (var_q[q] + (psi - psi_q[q]) * (psi - psi_q[q]));
            return {phi, psi, with_var ? var : kNaN};
          },
          [&](const spectral::Empirical& e) -> PhiPsiVar {
            // cos u_r with u_r = Dp . w_r (the random sign does not change cos): Phi is their mean, 1 - cos u_r =
            // 2 sin^2(u_r/2) =: h_r, and Var cos u = mean (h_r - mean h)^2 in two passes (exact even when all h_r agree).
            const auto n = static_cast<std::size_t>(e.w.rows());
            std::vector<double> h(n);
            double phi = 0, psi = 0;
            for (std::size_t r = 0; r < n; ++r) {
              double u = 0;
              for (Eigen::Index j = 0; j < e.w.cols(); ++j) u += lag[static_cast<std::size_t>(j)] * e.w(static_cast<Eigen::Index>(r), j);
              if (!std::isfinite(u)) overflowing_phase(spectrum, lag, "Dp . w");
              const double half = std::sin(0.5 * u);
              h[r] = 2 * half * half;
              phi += std::cos(u);
              psi += h[r];
            }
            phi /= static_cast<double>(n);
            psi /= static_cast<double>(n);
            double var = 0;
            if (with_var) {
              for (double hr : h) var += (hr - psi) * (hr - psi);
              var /= static_cast<double>(n);
            }
            return {phi, psi, with_var ? var : kNaN};
          },
      },
      spectrum);
}

}  // namespace

double kernel_values_work(const Spectrum& s) {
  const double k = dims(s);
  return std::visit(Overloaded{
                        [&](const spectral::Matern& m) {
                          const bool elementary = m.nu == 0.5 || m.nu == 1.5 || m.nu == 2.5 || m.nu > kMaternGaussianNu;
                          return elementary ? 10 + k : 2000 + k;
                        },
                        [&](const spectral::Mixture& m) { return 10 * k * static_cast<double>(m.mu.rows()); },
                        [&](const spectral::Empirical& e) { return 8 * k * static_cast<double>(e.w.rows()); },
                        [&](const auto&) { return 10 * k; },
                    },
                    s);
}

double one_minus_phi(const Spectrum& s, std::span<const double> lag) {
  check_lag(s, lag);
  return values_at(s, lag, false).psi;
}

double phi(const Spectrum& s, std::span<const double> lag) {
  check_lag(s, lag);
  return values_at(s, lag, false).phi;
}

KernelValues kernel_values(const Spectrum& s, std::span<const double> lag) {
  check_lag(s, lag);
  std::vector<double> lag2(lag.begin(), lag.end());
  for (double& v : lag2) {
    if (std::isinf(2 * v))
      throw_bad_value(fmt::format("spectrum '{}'", spelling(s)), "lag", format_number(v),
                      "at most 8.98e307 in magnitude: Phi2 is evaluated at 2 Dp");
    v *= 2;
  }
  const PhiPsiVar at1 = values_at(s, lag, true), at2 = values_at(s, lag2, false);
  KernelValues k;
  k.phi = at1.phi;
  k.psi = at1.psi;
  k.phi2 = at2.phi;
  k.psi2 = at2.psi;
  // Prop 4: Var[cos u] = (1 + Phi2)/2 - Phi^2 (per family without cancellation); Var[sin u] = (1 - Phi2)/2 = psi2/2.
  k.var_cos = at1.var_cos;
  k.var_sin = 0.5 * k.psi2;
  return k;
}

// ---------------------------------------------------------------------------------------------
// Sampling

namespace {

constexpr std::size_t kPiece = 256;  // samplers work in stack-held pieces: no allocation per call

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

void sample(const Spectrum& s, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(dims(s));
  std::visit(Overloaded{
                 [&](const spectral::Gaussian& g) {
                   rng.fill_normal(w, n * k);
                   const double scale = 1 / g.sigma;
                   for (std::size_t i = 0; i < n * k; ++i) w[i] *= scale;
                 },
                 [&](const spectral::Cauchy& c) {
                   rng.fill_uniform(w, n * k);
                   laplace_from_uniform(w, n * k, 1 / c.b);
                 },
                 [&](const spectral::Exponential& e) {
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
                 },
                 [&](const spectral::Sinc& c) {
                   rng.fill_uniform(w, n * k);
                   for (std::size_t j = 0; j < k; ++j)
                     for (std::size_t i = 0; i < n; ++i) w[j * n + i] = c.W[j] * (2 * w[j * n + i] - 1);
                 },
                 [&](const spectral::Matern& m) {
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
                       for (std::size_t i = 0; i < cnt; ++i)
                         scale[i] = std::exp(-0.5 * (scale[i] + u[i] / m.nu - log_nu)) / m.l;
                     }
                     for (std::size_t j = 0; j < k; ++j)
                       for (std::size_t i = 0; i < cnt; ++i) w[j * n + start + i] *= scale[i];
                   }
                 },
                 [&](const spectral::Mixture& m) {
                   const auto weights = normalised(m.weights);
                   std::vector<double> cumulative(weights.size());
                   std::partial_sum(weights.begin(), weights.end(), cumulative.begin());
                   for (std::size_t i = 0; i < n; ++i) {
                     const double u = rng.uniform();
                     std::size_t q = 0;
                     while (q + 1 < cumulative.size() && u >= cumulative[q]) ++q;
                     const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
                     for (std::size_t j = 0; j < k; ++j)
                       w[j * n + i] = sign * m.mu(static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(j)) +
                                      m.s(static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(j)) * rng.normal();
                   }
                 },
                 [&](const spectral::Empirical& e) {
                   const auto rows = static_cast<std::uint64_t>(e.w.rows());
                   for (std::size_t i = 0; i < n; ++i) {
                     const auto r = static_cast<Eigen::Index>(rng.below(rows));
                     const double sign = (rng.next() >> 63) ? -1.0 : 1.0;
                     for (std::size_t j = 0; j < k; ++j) w[j * n + i] = sign * e.w(r, static_cast<Eigen::Index>(j));
                   }
                 },
             },
             s);
}

bool has_quantile(const Spectrum& s) { return dims(s) == 1; }

QuantileFunction make_quantile(const Spectrum& s) {
  if (dims(s) != 1)
    throw_bad_value("ropekit::quantile", "dims", std::to_string(dims(s)), "1 (quantiles, and stratified sampling, are for 1-D densities)");
  return std::visit(
      Overloaded{
          [](const spectral::Gaussian& g) -> QuantileFunction {
            const boost::math::normal_distribution<double> dist(0.0, 1 / g.sigma);
            return [dist](double u) { return boost::math::quantile(dist, u); };
          },
          [](const spectral::Cauchy& c) -> QuantileFunction {
            return [b = c.b](double u) {
              double w = u;
              laplace_from_uniform(&w, 1, 1 / b);
              return w;
            };
          },
          [](const spectral::Exponential& e) -> QuantileFunction {
            return [l = e.l](double u) {
              double w = u;
              cauchy_from_uniform(&w, 1, 1 / l);
              return w;
            };
          },
          [](const spectral::Sinc& c) -> QuantileFunction {
            return [W = c.W[0]](double u) { return W * (2 * u - 1); };
          },
          [](const spectral::Matern& m) -> QuantileFunction {
            const boost::math::students_t_distribution<double> dist(2 * m.nu);
            return [dist, l = m.l](double u) { return boost::math::quantile(dist, u) / l; };
          },
          [](const spectral::Mixture& m) -> QuantileFunction {
            // Invert the CDF sum_q w_q (N(x; mu_q, s_q) + N(x; -mu_q, s_q))/2: a table of the CDF on 1025
            // points of a bracket that holds every component's +-40 s_q gives a tight bracket, and TOMS 748
            // finishes to full precision in a few evaluations.
            const auto w = normalised(m.weights);
            double hi = 0;
            for (Eigen::Index q = 0; q < m.mu.rows(); ++q) hi = std::max(hi, std::abs(m.mu(q, 0)) + 40 * m.s(q, 0) + 1e-300);
            const Eigen::VectorXd mu = m.mu.col(0), sd = m.s.col(0);
            auto cdf = [w, mu, sd](double x) {
              double c = 0;
              for (Eigen::Index q = 0; q < mu.size(); ++q) {
                auto step = [&](double centre) {
                  if (sd[q] == 0) return x < centre ? 0.0 : 1.0;
                  return 0.5 * std::erfc(-(x - centre) / (sd[q] * M_SQRT2));
                };
                c += w[static_cast<std::size_t>(q)] * 0.5 * (step(mu[q]) + step(-mu[q]));
              }
              return c;
            };
            constexpr int kTable = 1024;
            std::vector<double> xs(kTable + 1), cs(kTable + 1);
            for (int i = 0; i <= kTable; ++i) {
              xs[static_cast<std::size_t>(i)] = -hi + 2 * hi * i / kTable;
              cs[static_cast<std::size_t>(i)] = cdf(xs[static_cast<std::size_t>(i)]);
            }
            return [cdf, xs, cs](double u) {
              auto j = static_cast<std::size_t>(std::upper_bound(cs.begin(), cs.end(), u) - cs.begin());
              j = std::clamp<std::size_t>(j, 1, xs.size() - 1);
              const double lo = xs[j - 1], hi = xs[j];
              const double flo = cs[j - 1] - u, fhi = cs[j] - u;
              if (flo >= 0) return lo;
              if (fhi <= 0) return hi;
              std::uintmax_t iterations = 100;
              const auto r = boost::math::tools::toms748_solve([&](double x) { return cdf(x) - u; }, lo, hi, flo, fhi,
                                                               boost::math::tools::eps_tolerance<double>(52), iterations);
              return 0.5 * (r.first + r.second);
            };
          },
          [](const spectral::Empirical& e) -> QuantileFunction {
            // The symmetrised list {+w_j, -w_j}, sorted: quantile u is its element floor(2 n u).
            std::vector<double> sorted;
            for (Eigen::Index r = 0; r < e.w.rows(); ++r) {
              sorted.push_back(e.w(r, 0));
              sorted.push_back(-e.w(r, 0));
            }
            std::sort(sorted.begin(), sorted.end());
            return [sorted](double u) {
              const auto i = static_cast<std::size_t>(u * static_cast<double>(sorted.size()));
              return sorted[std::min(i, sorted.size() - 1)];
            };
          },
      },
      s);
}

double quantile(const Spectrum& s, double u) { return make_quantile(s)(u); }

double density(const Spectrum& s, std::span<const double> w) {
  if (static_cast<int>(w.size()) != dims(s))
    throw_bad_value("ropekit::density", "w dimension", std::to_string(w.size()), fmt::format("k = {}", dims(s)));
  const double k = static_cast<double>(w.size());
  return std::visit(
      Overloaded{
          [&](const spectral::Gaussian& g) {
            const double r = norm(w) * g.sigma;
            return std::pow(g.sigma * g.sigma / (2 * M_PI), k / 2) * std::exp(-0.5 * r * r);
          },
          [&](const spectral::Cauchy& c) {
            double p = 1;
            for (double x : w) p *= 0.5 * c.b * std::exp(-c.b * std::abs(x));
            return p;
          },
          [&](const spectral::Exponential& e) {
            // Multivariate Cauchy scaled by 1/l: Gamma((1+k)/2) / pi^((1+k)/2) l^k (1 + l^2 |w|^2)^(-(1+k)/2).
            const double r = norm(w) * e.l;
            return std::exp(std::lgamma((1 + k) / 2) - (1 + k) / 2 * std::log(M_PI) + k * std::log(e.l) -
                            (1 + k) / 2 * std::log1p(r * r));
          },
          [&](const spectral::Sinc& c) {
            double p = 1;
            for (std::size_t j = 0; j < w.size(); ++j) p *= std::abs(w[j]) <= c.W[j] ? 0.5 / c.W[j] : 0.0;
            return p;
          },
          [&](const spectral::Matern& m) {
            // Spec section 2: Gamma(nu + k/2) / (Gamma(nu) pi^(k/2)) (2nu/l^2)^nu (2nu/l^2 + |w|^2)^(-(nu + k/2)).
            // With a = 2nu/l^2, in logarithms that stay finite for any nu: nu log a - (nu + k/2) log(a + |w|^2) =
            // -(k/2) log a - (nu + k/2) log1p(|w|^2/a). log Gamma(nu + h) - log Gamma(nu), h = k/2, cancels for large
            // nu (it was inf - inf at nu = 3.5e307): there h log nu + h (h - 1)/(2 nu), whose next term is
            // O(h^3/nu^2) < 1e-21 above nu = 1e15; Boost's Gamma(nu)/Gamma(nu + h) where it is a normal number.
            const double log_a = M_LN2 + std::log(m.nu) - 2 * std::log(m.l), r = norm(w) * m.l, h = k / 2;
            double log_gamma_ratio = h * std::log(m.nu) + h * (h - 1) / (2 * m.nu);
            if (m.nu <= 1e15) {
              const double ratio = boost::math::tgamma_delta_ratio(m.nu, h, QuietPolicy());
              log_gamma_ratio = ratio >= DBL_MIN && std::isfinite(ratio) ? -std::log(ratio)
                                                                         : std::lgamma(m.nu + h) - std::lgamma(m.nu);
            }
            return std::exp(log_gamma_ratio - k / 2 * std::log(M_PI) - k / 2 * log_a -
                            (m.nu + k / 2) * std::log1p(r * r / (2 * m.nu)));
          },
          [&](const spectral::Mixture& m) {
            if (m.s.minCoeff() == 0)  // a zero width is a point mass along that axis
              throw InputError(fmt::format("spectrum '{}': a component with s = 0 is a point mass, which has no density",
                                           spelling(s)));
            const auto weights = normalised(m.weights);
            double p = 0;
            for (Eigen::Index q = 0; q < m.mu.rows(); ++q) {
              double plus = 1, minus = 1;
              for (Eigen::Index j = 0; j < m.mu.cols(); ++j) {
                const double sd = m.s(q, j), x = w[static_cast<std::size_t>(j)];
                auto pdf = [&](double z) { return std::exp(-0.5 * z * z) / (sd * std::sqrt(2 * M_PI)); };
                plus *= pdf((x - m.mu(q, j)) / sd);
                minus *= pdf((x + m.mu(q, j)) / sd);
              }
              p += weights[static_cast<std::size_t>(q)] * 0.5 * (plus + minus);
            }
            return p;
          },
          [&](const spectral::Empirical& e) -> double {
            throw InputError(fmt::format("frequency file '{}' is a discrete spectrum: it has no density", e.source));
          },
      },
      s);
}

const std::vector<SpectrumFamilyInfo>& spectrum_families() {
  static const std::vector<SpectrumFamilyInfo> families = {
      {"gaussian:sigma=<s>[,dims=k]", "w ~ N(0, sigma^-2 I_k)", "exp(-|Dp|^2 / (2 sigma^2))"},
      {"cauchy:b=<b>[,dims=k]", "each w_j ~ Laplace(0, 1/b), density (b/2) e^{-b|w|}", "prod_j 1/(1 + (Dp_j/b)^2)"},
      {"exponential:l=<l>[,dims=k]", "1-D: Cauchy(0, 1/l); k-D: multivariate Cauchy (Student-t, 1 dof) / l", "exp(-|Dp|/l)"},
      {"sinc:W=<W1>[,<W2>...][,dims=k]", "each w_j ~ U(-W_j, W_j)", "prod_j sin(W_j Dp_j)/(W_j Dp_j)"},
      {"matern:nu=<nu>,l=<l>[,dims=k]", "Z/(l sqrt(V)), Z ~ N(0, I_k), V ~ Gamma(nu, rate nu) (Student-t, 2 nu dof)",
       "2^{1-nu}/Gamma(nu) x^nu K_nu(x), x = sqrt(2 nu)|Dp|/l"},
      {"mixture:weights=<w..>,mu=<mu..>,s=<s..>[,dims=k]", "component q: N(+-mu_q, diag(s_q^2)), both signs, equal mass",
       "sum_q w_q exp(-sum_j s_qj^2 Dp_j^2/2) cos(mu_q . Dp)"},
      {"file:<path>", "the file's frequency vectors (one per line), uniformly, with a random sign", "(1/n) sum_j cos(Dp . w_j)"},
  };
  return families;
}

}  // namespace ropekit
