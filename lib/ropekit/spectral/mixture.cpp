#include "ropekit/spectral/mixture.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

namespace ropekit::spectral {

std::string spelling(const Mixture& m) {
  std::vector<double> mu(m.mu.data(), m.mu.data() + m.mu.size()), sd(m.s.data(), m.s.data() + m.s.size());
  // Eigen is column-major: write row by row (component by component).
  for (Eigen::Index q = 0; q < m.mu.rows(); ++q)
    for (Eigen::Index j = 0; j < m.mu.cols(); ++j) {
      mu[static_cast<std::size_t>(q * m.mu.cols() + j)] = m.mu(q, j);
      sd[static_cast<std::size_t>(q * m.mu.cols() + j)] = m.s(q, j);
    }
  return with_dims(fmt::format("mixture:weights={},mu={},s={}", join(m.weights), join(mu), join(sd)),
                   static_cast<int>(m.mu.cols()));
}

void validate(const Mixture& m, std::string_view where) {
  if (m.weights.empty()) throw_bad_value(where, "weights", "an empty list", "at least one weight");
  for (double w : m.weights) check_positive(where, "weights", w);
  check_dims(where, m.mu.cols());
  if (m.mu.rows() != static_cast<Eigen::Index>(m.weights.size()) || m.s.rows() != m.mu.rows() || m.s.cols() != m.mu.cols())
    throw_bad_value(where, "mu, s", fmt::format("{}x{} and {}x{}", m.mu.rows(), m.mu.cols(), m.s.rows(), m.s.cols()),
                    fmt::format("one row of k values per component ({} components)", m.weights.size()));
  for (Eigen::Index i = 0; i < m.mu.size(); ++i) {
    check_frequency(where, "mu", m.mu.data()[i]);
    check_nonnegative(where, "s", m.s.data()[i]);
    check_frequency(where, "s", m.s.data()[i]);
  }
}

Mixture parse_family(Spelling& sp, std::string_view where, const Mixture*) {
  Mixture m;
  const auto w = sp.take_doubles("weights");
  const auto mu = sp.take_doubles("mu");
  const auto sd = sp.take_doubles("s");
  const int k = take_dims(sp, where);
  sp.finish("weights, mu, s, dims");
  if (!w || !mu || !sd)
    throw InputError(fmt::format("{}: {} = none (must be given: a mixture needs weights=, mu= and s=, e.g. "
                                 "mixture:weights=0.7,0.3,mu=0,2,s=0.5,0.1)",
                                 where, !w ? "weights" : !mu ? "mu" : "s"));
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
  return m;
}

PhiPsiVar values_at(const Mixture& m, std::span<const double> lag, bool with_var) {
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
      if (!std::isfinite(b)) overflowing_phase(spelling(m), lag, "mu . Dp");
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
  return {phi, psi, with_var ? var : std::numeric_limits<double>::quiet_NaN()};
}

double kernel_work(const Mixture& m) { return 10 * static_cast<double>(m.mu.cols()) * static_cast<double>(m.mu.rows()); }

void sample(const Mixture& m, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(m.mu.cols());
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
}

QuantileFunction quantile_function(const Mixture& m) {
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
}

double pdf(const Mixture& m, std::span<const double> w) {
  if (m.s.minCoeff() == 0)  // a zero width is a point mass along that axis
    throw InputError(fmt::format("spectrum '{}': a component with s = 0 is a point mass, which has no density", spelling(m)));
  const auto weights = normalised(m.weights);
  double p = 0;
  for (Eigen::Index q = 0; q < m.mu.rows(); ++q) {
    double plus = 1, minus = 1;
    for (Eigen::Index j = 0; j < m.mu.cols(); ++j) {
      const double sd = m.s(q, j), x = w[static_cast<std::size_t>(j)];
      auto normal_pdf = [&](double z) { return std::exp(-0.5 * z * z) / (sd * std::sqrt(2 * M_PI)); };
      plus *= normal_pdf((x - m.mu(q, j)) / sd);
      minus *= normal_pdf((x + m.mu(q, j)) / sd);
    }
    p += weights[static_cast<std::size_t>(q)] * 0.5 * (plus + minus);
  }
  return p;
}

Mixture wrong_density(const Mixture& m) {
  Mixture out = m;
  out.mu.setZero();
  return out;
}

}  // namespace ropekit::spectral
