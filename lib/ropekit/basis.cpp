#include "ropekit/basis.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "ropekit/error.hpp"
#include "ropekit/vecmath.hpp"
#include "ropekit/overloaded.hpp"

namespace ropekit {

namespace {

constexpr const char* kWhere = "ropekit::BasisParams";

// Appends columns left to right; the final count is checked against n_features().
class ColumnWriter {
 public:
  ColumnWriter(Eigen::Index rows, int cols) : x_(rows, cols) {}
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

void BasisParams::validate() const {
  check_at_least(kWhere, "num_freqs", num_freqs, 1);
  if (head_dim <= 0 || head_dim % 2 != 0)
    throw_bad_value(kWhere, "head_dim", std::to_string(head_dim), "a positive even integer");
  check_positive(kWhere, "theta", theta);
  check_nonnegative(kWhere, "gamma", gamma);
  check_at_least(kWhere, "train_context", train_context, 1);
}

Eigen::VectorXd BasisParams::frequencies() const {
  Eigen::VectorXd w(num_freqs);
  for (int k = 0; k < num_freqs; ++k) w[k] = std::pow(theta, -2.0 * k / head_dim);
  return w;
}

int n_features(const Method& method, const BasisParams& p) {
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

BasisEvaluator::BasisEvaluator(const BasisParams& params, Eigen::VectorXd lags)
    : params_(params), lags_(std::move(lags)) {
  params_.validate();
  for (Eigen::Index i = 0; i < lags_.size(); ++i)
    if (!(lags_[i] >= 0) || !std::isfinite(lags_[i]))
      throw_bad_value("ropekit::BasisEvaluator", fmt::format("lag[{}]", i), format_number(lags_[i]),
                      "finite and >= 0 (causal lags)");
  const Eigen::VectorXd w = params_.frequencies();
  cos_.resize(lags_.size(), w.size());
  sin_.resize(lags_.size(), w.size());
  Eigen::VectorXd angle(lags_.size());
  for (Eigen::Index k = 0; k < w.size(); ++k) {
    angle = w[k] * lags_;
    sincos_array(angle.data(), sin_.col(k).data(), cos_.col(k).data(), static_cast<std::size_t>(angle.size()));
  }
}

Eigen::MatrixXd BasisEvaluator::features(const Method& method) const { return features(method, 0, lags_.size()); }

Eigen::MatrixXd BasisEvaluator::features(const Method& method, Eigen::Index first, Eigen::Index count) const {
  if (first < 0 || count < 0 || first + count > lags_.size())
    throw std::out_of_range(fmt::format("BasisEvaluator::features: rows [{}, {}) of {}", first, first + count, lags_.size()));
  const auto& p = params_;
  const double L = std::max(p.train_context, 1);
  const Eigen::ArrayXd d = lags_.segment(first, count).array();
  const auto cos_ = this->cos_.middleRows(first, count);
  const auto sin_ = this->sin_.middleRows(first, count);
  const Eigen::ArrayXd x = d / L;
  // Shear time over L: x/(1+x) = tau(d)/L with tau(d) = d/(1+d/L) when bounded, else x.
  auto that = [&](const std::optional<bool>& bounded) -> Eigen::ArrayXd {
    return bounded.value_or(p.bounded_tau) ? Eigen::ArrayXd(x / (1.0 + x)) : x;
  };
  auto damping = [&](const std::optional<double>& gamma) -> Eigen::ArrayXd {
    return (-gamma.value_or(p.gamma) * d).exp();
  };
  const int F = p.num_freqs;
  ColumnWriter out(d.size(), n_features(method, p));
  out.add_ones();
  // Jordan chain: for p < m, coefficient t^p/p! * envelope, times C then S.
  auto jordan_chain = [&](int m, const Eigen::ArrayXd& t, const Eigen::ArrayXd& envelope) {
    Eigen::ArrayXd coef = envelope;
    for (int q = 0; q < m; ++q) {
      if (q > 0) coef = coef * t / static_cast<double>(q);
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
                 [&](const DampedRope& m) { jordan_chain(1, x, damping(m.gamma)); },
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
                 [&](const Jordan& m) { jordan_chain(m.m, that(m.bounded_tau), damping(m.gamma)); },
                 [&](const JordanScaled& m) { jordan_chain(m.m, x, (-m.c * x).exp()); },
             },
             method);
  return std::move(out).finish();
}

Eigen::MatrixXd features(const Method& method, const BasisParams& params, const Eigen::VectorXd& lags) {
  return BasisEvaluator(params, lags).features(method);
}

}  // namespace ropekit
