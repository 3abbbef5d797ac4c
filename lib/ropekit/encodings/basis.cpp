#include "ropekit/encodings/basis.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/finite.hpp"
#include "ropekit/core/huge_pages.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/core/overloaded.hpp"

namespace ropekit {

namespace {

// ln(DBL_MAX) = 709.78 less ln 64: the running product coef * t / q meets coef * t before dividing by
// q <= 31, so a column below this bound never overflows on the way.
constexpr double kLogMax = 709.78 - 4.16;

// Appends columns left to right; the final count is checked against n_features().
class ColumnWriter {
 public:
  ColumnWriter(Eigen::Index rows, int cols) : x_(huge_matrix(rows, cols)) {}
  void add(const Eigen::ArrayXd& col) { x_.col(j_++) = col.matrix(); }
  void add_ones() { x_.col(j_++).setOnes(); }
  /// Every column of m, each multiplied elementwise by w.
  template <class M>
  void add_weighted(const Eigen::ArrayXd& w, const M& m) {
    for (Eigen::Index k = 0; k < m.cols(); ++k) x_.col(j_++) = (w * m.col(k).array()).matrix();
  }
  template <class M>
  void add_block(const M& m) {
    x_.middleCols(j_, m.cols()) = m;
    j_ += static_cast<int>(m.cols());
  }
  Eigen::MatrixXd finish() && {
    if (j_ != x_.cols()) throw std::logic_error("ropekit::features: column count mismatch");
    return std::move(x_);
  }

 private:
  Eigen::MatrixXd x_;
  int j_ = 0;
};

}  // namespace

void BasisParams::validate(const Where& where) const {
  check_in_range(where, "num_freqs", num_freqs, 1, kMaxNumFreqs);
  if (head_dim <= 0 || head_dim % 2 != 0)
    throw_bad_value(where, "head_dim", std::to_string(head_dim), "a positive even integer");
  check_positive(where, "theta", base);  // messages use the key users type: --theta, position.theta
  // theta < 1 makes the grid ascend: its top theta^(-2(F-1)/h) must be a finite number.
  if (!std::isfinite(max_frequency()))
    throw_bad_value(where, "theta", format_number(base),
                    fmt::format("at least {} for {} = {} and {} = {}: the highest frequency theta^(-2(F-1)/h) must "
                                "be finite",
                                format_number(std::exp(-709.78 * head_dim / (2.0 * (num_freqs - 1)))),
                                where.name("num_freqs"), num_freqs, where.name("head_dim"), head_dim));
  check_nonnegative(where, "gamma", gamma);
  check_at_least(where, "train_context", train_context, 1);
  if (eta && (!(*eta > 0) || !std::isfinite(*eta) || !std::isfinite(1 / *eta)))
    throw_bad_value(where, "eta", format_number(*eta), "finite and > 0 with 1/eta finite");
  if (omega) {
    if (omega->size() != num_freqs)
      throw_bad_value(where, "omega", fmt::format("{} values", omega->size()),
                      fmt::format("{} = {} values", where.name("num_freqs"), num_freqs));
    for (Eigen::Index k = 0; k < omega->size(); ++k)
      if (!((*omega)[k] > 0) || !std::isfinite((*omega)[k]))
        throw_bad_value(where, fmt::format("omega[{}]", k), format_number((*omega)[k]), "finite and > 0");
  }
}

double BasisParams::max_frequency() const {
  if (omega) return omega->size() ? omega->maxCoeff() : 0.0;
  return base >= 1 ? 1.0 : geometric_frequency(base, num_freqs - 1, head_dim);
}

Eigen::VectorXd BasisParams::frequencies() const {
  if (omega) return *omega;
  Eigen::VectorXd w(num_freqs);
  for (int k = 0; k < num_freqs; ++k) w[k] = geometric_frequency(base, k, head_dim);
  return w;
}

int n_features(const Method& method, const BasisParams& p) {
  if (p.num_freqs < 1 || p.num_freqs > kMaxNumFreqs)  // 1 + 2 * 32 * F must not overflow int
    throw_bad_value(Where("basis parameters"), "num_freqs", std::to_string(p.num_freqs),
                    fmt::format("an integer in [1, {}]", kMaxNumFreqs));
  const int F = p.num_freqs;
  using namespace method;
  return std::visit(Overloaded{
                        [](const Nope&) { return 1; },
                        [&](const Rope&) { return 1 + 2 * F; },
                        [&](const RopeMatched& m) { return 1 + 2 * std::max(1, F / m.k); },
                        [](const Alibi&) { return 2; },
                        [&](const RopeAlibi&) { return 2 + 2 * F; },
                        [&](const DampedRope&) { return 1 + 2 * F; },
                        [](const RealJordan&) { return 3; },
                        [&](const DirectSum&) { return 4 + 2 * F; },
                        [&](const DirectSumPoly& m) { return 2 * F + m.k; },
                        [&](const Jordan& m) { return 1 + 2 * m.m * F; },
                        [&](const JordanScaled& m) { return 1 + 2 * m.m * F; },
                    },
                    method);
}

std::vector<std::string> feature_names(const Method& method, const BasisParams& p) {
  const int F = p.num_freqs;
  std::vector<std::string> names = {"1"};
  auto trig = [&](const std::string& prefix, int count) {
    for (const char* f : {"cos", "sin"})
      for (int k = 0; k < count; ++k) names.push_back(fmt::format("{}{}{}", prefix, f, k));
  };
  // Jordan chain coefficient t^q/q! times an envelope, written compactly.
  auto chain = [&](int m, const std::string& t, const std::string& envelope) {
    for (int q = 0; q < m; ++q) {
      std::string c = q == 0 ? "" : q == 1 ? t + "*" : fmt::format("{}^{}/{}!*", t, q, q);
      trig(c + envelope + "*", F);
    }
  };
  using namespace method;
  std::visit(Overloaded{
                 [](const Nope&) {},
                 [&](const Rope&) { trig("", F); },
                 [&](const RopeMatched& m) { trig("", std::max(1, F / m.k)); },
                 [&](const Alibi&) { names.push_back("x"); },
                 [&](const RopeAlibi&) {
                   trig("", F);
                   names.push_back("x");
                 },
                 [&](const DampedRope&) { chain(1, "", "E"); },
                 [&](const RealJordan&) { names.insert(names.end(), {"E", "that*E"}); },
                 [&](const DirectSum&) {
                   trig("", F);
                   names.insert(names.end(), {"x", "E", "that*E"});
                 },
                 [&](const DirectSumPoly& m) {
                   trig("", F);
                   for (int q = 1; q < m.k; ++q) names.push_back(q == 1 ? "that" : fmt::format("that^{}", q));
                 },
                 [&](const Jordan& m) { chain(m.m, "that", "E"); },
                 [&](const JordanScaled& m) { chain(m.m, "x", "e^-cx"); },
             },
             method);
  return names;
}

double features_bytes(const Method& method, const BasisParams& p, double rows) {
  // cos and sin tables (F each), the matrix, and up to 6 working columns (d, x, that, E, coefficients).
  return 8.0 * rows * (2.0 * p.num_freqs + n_features(method, p) + 6.0);
}

namespace {

// ln of max_{q < m} e^{-a d} t^q / q!, log_t = ln t, t = d / L (raw shear time or x) or eta d, without forming
// any power. log_t is -inf at d = 0: only q = 0 counts.
double log_chain_max(int m, double a, double d, double log_t) {
  double best = -a * d;
  for (int q = 1; q < m; ++q) best = std::max(best, -a * d + q * log_t - std::lgamma(q + 1.0));
  return best;
}

}  // namespace

double log_max_column(const Method& method, const BasisParams& p, double d) {
  const double L = std::max(p.train_context, 1);
  using namespace method;
  return std::visit(Overloaded{
                        [&](const DirectSumPoly& m) {
                          if (m.bounded_tau.value_or(p.bounded_tau)) return 0.0;  // that < 1
                          return std::max(0.0, (m.k - 1) * std::log(d / L));
                        },
                        [&](const Jordan& m) {
                          const bool bounded = m.bounded_tau.value_or(p.bounded_tau);
                          if (bounded && !p.eta) return 0.0;  // that < 1, E <= 1
                          const double t = bounded ? d / (1 + d / L) : d;  // that = eta tau(d) < eta L when bounded
                          const double log_t = p.eta ? std::log(*p.eta * t) : std::log(d / L);
                          return std::max(0.0, log_chain_max(m.m, m.gamma.value_or(p.gamma), d, log_t));
                        },
                        [&](const JordanScaled& m) {
                          return std::max(0.0, log_chain_max(m.m, m.c / L, d, std::log(d / L)));
                        },
                        [&](const auto&) { return std::max(0.0, std::log(d / L)); },  // x = d / L
                    },
                    method);
}

std::optional<LagOverflow> find_lag_overflow(const Method& method, const BasisParams& p, const Eigen::VectorXd& lags) {
  const double omega = p.max_frequency();
  auto phase_fits = [&](double d) { return omega * d <= 0x1p1023; };
  auto power_fits = [&](double d) { return log_max_column(method, p, d) <= kLogMax; };
  for (Eigen::Index i = 0; i < lags.size(); ++i) {
    const double d = lags[i];
    if (!(d >= 0) || (phase_fits(d) && power_fits(d))) continue;
    const bool phase = !phase_fits(d);
    // Geometric bisection for the first lag where it leaves float64 (every column is finite near 0).
    double lo = std::max(d * 0x1p-1000, 1e-300), hi = d;
    auto fits = [&](double x) { return phase ? phase_fits(x) : power_fits(x); };
    if (!fits(lo)) lo = 0;
    for (int it = 0; it < 200 && lo > 0 && hi / lo - 1 > 1e-12; ++it) {
      const double mid = std::sqrt(lo) * std::sqrt(hi);  // lo * hi may overflow
      (fits(mid) ? lo : hi) = mid;
    }
    return LagOverflow{d, lo, phase ? fmt::format("the phase omega_k d (omega_k up to {})", format_number(omega))
                                    : std::string("a power of the raw shear time")};
  }
  return std::nullopt;
}

BasisEvaluator::BasisEvaluator(const BasisParams& params, Eigen::VectorXd lags)
    : params_(params), lags_(std::move(lags)) {
  params_.validate();
  for (Eigen::Index i = 0; i < lags_.size(); ++i)
    if (!(lags_[i] >= 0) || !std::isfinite(lags_[i]))
      throw_bad_value("basis evaluation", fmt::format("lag[{}]", i), format_number(lags_[i]),
                      "finite and >= 0 (causal lags)");
  const Eigen::VectorXd w = params_.frequencies();
  F_ = w.size();
  table_ = huge_matrix(lags_.size(), 1 + 2 * F_);
  table_.col(0).setOnes();
  Eigen::VectorXd angle(lags_.size());
  for (Eigen::Index k = 0; k < F_; ++k) {
    angle = w[k] * lags_;
    sincos_array(angle.data(), table_.col(1 + F_ + k).data(), table_.col(1 + k).data(),
                 static_cast<std::size_t>(angle.size()));
  }
}

Eigen::MatrixXd BasisEvaluator::take_rope_features() && {
  if (!all_finite(table_)) return features(method::Rope{});  // the overflow message (cos, sin are finite or NaN)
  return std::move(table_);
}

Eigen::MatrixXd BasisEvaluator::features(const Method& method) const { return features(method, 0, lags_.size()); }

Eigen::MatrixXd BasisEvaluator::features(const Method& method, Eigen::Index first, Eigen::Index count) const {
  if (first < 0 || count < 0 || first + count > lags_.size())
    throw std::out_of_range(fmt::format("BasisEvaluator::features: rows [{}, {}) of {}", first, first + count, lags_.size()));
  const auto& p = params_;
  const double L = std::max(p.train_context, 1);
  const Eigen::ArrayXd d = lags_.segment(first, count).array();
  const auto cos_ = table_.middleCols(1, F_).middleRows(first, count);
  const auto sin_ = table_.middleCols(1 + F_, F_).middleRows(first, count);
  const Eigen::ArrayXd x = d / L;
  // Shear time over L: x/(1+x) = tau(d)/L with tau(d) = d/(1+d/L) when bounded, else x. With a shear rate
  // (Jordan's eta): eta tau(d) with tau(d) = d/(1 + d/L) bounded (Jordan-RoPE's stabilized shear), else eta d.
  auto that = [&](const std::optional<bool>& bounded, std::optional<double> rate = {}) -> Eigen::ArrayXd {
    if (!rate) return bounded.value_or(p.bounded_tau) ? Eigen::ArrayXd(x / (1.0 + x)) : x;
    if (!bounded.value_or(p.bounded_tau)) return *rate * d;
    return *rate * (d / (1.0 + x));
  };
  auto damping = [&](const std::optional<double>& gamma) -> Eigen::ArrayXd {
    return (-gamma.value_or(p.gamma) * d).exp();
  };
  const int F = p.num_freqs;
  ColumnWriter out(d.size(), n_features(method, p));
  out.add_ones();
  // Jordan chain: for p < m, coefficient t^p/p! * envelope, times C then S, envelope = e^{log_env}.
  // Where the envelope is normal the coefficients are a running product; where it underflows
  // (log_env < -650) the product would be 0 * t^q although t^q e^{log_env} may be a normal number, so
  // they are e^{log_env + q ln t - ln q!} there (relative error about |exponent| eps).
  auto jordan_chain = [&](int m, const Eigen::ArrayXd& t, const Eigen::ArrayXd& log_env) {
    const Eigen::ArrayXd envelope = log_env.exp();
    Eigen::ArrayXd coef = envelope;
    const bool tiny = (log_env < -650.0).any();
    const Eigen::ArrayXd log_t = tiny ? Eigen::ArrayXd(t.log()) : Eigen::ArrayXd();
    for (int q = 0; q < m; ++q) {
      if (q > 0) coef = coef * t / static_cast<double>(q);
      if (tiny && q > 0)
        for (Eigen::Index i = 0; i < coef.size(); ++i)
          if (log_env[i] < -650.0) coef[i] = std::exp(log_env[i] + q * log_t[i] - std::lgamma(q + 1.0));
      out.add_weighted(coef, cos_);
      out.add_weighted(coef, sin_);
    }
  };
  using namespace method;
  std::visit(Overloaded{
                 [](const Nope&) {},
                 [&](const Rope&) {
                   out.add_block(cos_);
                   out.add_block(sin_);
                 },
                 [&](const RopeMatched& m) {
                   const int M = std::max(1, F / m.k);
                   out.add_block(cos_.leftCols(M));
                   out.add_block(sin_.leftCols(M));
                 },
                 [&](const Alibi&) { out.add(x); },
                 [&](const RopeAlibi&) {
                   out.add_block(cos_);
                   out.add_block(sin_);
                   out.add(x);
                 },
                 [&](const DampedRope& m) { jordan_chain(1, x, -m.gamma.value_or(p.gamma) * d); },
                 [&](const RealJordan& m) {
                   const Eigen::ArrayXd e = damping(m.gamma);
                   out.add(e);
                   out.add(that(m.bounded_tau) * e);
                 },
                 [&](const DirectSum& m) {
                   const Eigen::ArrayXd e = damping(m.gamma);
                   out.add_block(cos_);
                   out.add_block(sin_);
                   out.add(x);
                   out.add(e);
                   out.add(that(m.bounded_tau) * e);
                 },
                 [&](const DirectSumPoly& m) {
                   out.add_block(cos_);
                   out.add_block(sin_);
                   const Eigen::ArrayXd t = that(m.bounded_tau);
                   Eigen::ArrayXd power = t;
                   for (int q = 1; q < m.k; ++q, power *= t) out.add(power);
                 },
                 [&](const Jordan& m) {
                   jordan_chain(m.m, that(m.bounded_tau, p.eta), -m.gamma.value_or(p.gamma) * d);
                 },
                 [&](const JordanScaled& m) { jordan_chain(m.m, x, -m.c * x); },
             },
             method);
  Eigen::MatrixXd X = std::move(out).finish();
  if (!all_finite(X)) {  // callers refuse such lags up front (find_lag_overflow); this is the safety net
    const auto o = find_lag_overflow(method, p, lags_.segment(first, count));
    throw_bad_value("basis evaluation", "lag", o ? format_number(o->lag) : "?",
                    fmt::format("at most {} for {}: beyond it a column leaves the float64 range",
                                o ? format_number(o->limit) : "?", spelling(method)));
  }
  return X;
}

Eigen::MatrixXd features(const Method& method, const BasisParams& params, const Eigen::VectorXd& lags) {
  return BasisEvaluator(params, lags).features(method);
}

}  // namespace ropekit
