#include "ropekit/encodings/feature_columns.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/huge_pages.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit {

BasisParams basis_params(const FrequencySchedule& f) {
  BasisParams p;
  const auto* g = std::get_if<Geometric>(&f.source);
  // The basis's own grid needs an even h; an odd r = int(n p) (a partial product) goes as explicit frequencies.
  if (g && std::holds_alternative<scaling::None>(f.scaling) && truncated_rotary_dims(*g) % 2 == 0) {
    p.head_dim = truncated_rotary_dims(*g);  // r, the grid's denominator
    p.base = g->base;
    p.num_freqs = g->count.value_or(default_count(*g));
  } else {
    const auto t = frequencies(f);
    p.num_freqs = static_cast<int>(t.theta.rows());
    p.omega = t.theta.col(0);
  }
  return p;
}

BasisParams shear_params(int L, bool bounded, double gamma) {
  BasisParams p;
  p.num_freqs = 1;
  p.train_context = L;
  p.bounded_tau = bounded;
  p.gamma = gamma;
  return p;
}

Features method_features(const Method& m, const BasisParams& p, const Lags& lags) {
  Eigen::VectorXd d = lags.col(0);
  BasisEvaluator basis(p, std::move(d));
  if (std::holds_alternative<method::Rope>(m)) return {std::move(basis).take_rope_features(), feature_names(m, p)};
  return {basis.features(m), feature_names(m, p)};
}

Features trig_columns(const Eigen::MatrixXd& w, const Lags& lags, const std::vector<double>& envelope_base,
                      double envelope_scale) {
  const Eigen::Index D = w.rows(), rows = lags.rows();
  Features f;
  f.values = huge_matrix(rows, 1 + 2 * D);
  f.values.col(0).setOnes();
  f.names.push_back("1");
  for (Eigen::Index i = 0; i < D; ++i) f.names.push_back(fmt::format("cos{}", i));
  for (Eigen::Index i = 0; i < D; ++i) f.names.push_back(fmt::format("sin{}", i));
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index i = 0; i < D; ++i) {
      const double phase = w.row(i).dot(lags.row(r));
      const double env = envelope_base.empty() ? 1.0 : std::pow(envelope_base[i], lags(r, 0) / envelope_scale);
      f.values(r, 1 + i) = env * std::cos(phase);
      f.values(r, 1 + D + i) = env * std::sin(phase);
    }
  if (!envelope_base.empty())
    for (Eigen::Index i = 0; i < D; ++i) {
      f.names[1 + i] = fmt::format("zeta{0}^(d/S)*cos{0}", i);
      f.names[1 + D + i] = fmt::format("zeta{0}^(d/S)*sin{0}", i);
    }
  return f;
}

Features drop_columns(Features f, Eigen::Index first, Eigen::Index count) {
  const Eigen::Index n = f.values.cols();
  Eigen::MatrixXd v(f.values.rows(), n - count);
  v << f.values.leftCols(first), f.values.rightCols(n - first - count);
  f.values = std::move(v);
  f.names.erase(f.names.begin() + first, f.names.begin() + first + count);
  return f;
}

}  // namespace ropekit
